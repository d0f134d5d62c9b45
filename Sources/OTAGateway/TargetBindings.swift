/// Which Bluetooth identity each target's serial is bound to. A serial (the Device Information
/// Service's Serial Number String) is only a string any device near the gateway may say; so the
/// first time the gateway sees a serial it records the identity of the device that said it (its
/// address as the link reports it; on the simulated link its socket's name), and from then on only
/// that identity is served as the target. A second identity claiming a bound serial, or two
/// identities claiming a new serial at once, is an alarm for the serial: neither device is served
/// until an operator settles it (`otactl gateway --rebind SERIAL`). Kept by the gateway in its
/// state directory (`bindings.json`); no IO here.
public struct TargetBindings: Codable, Sendable, Equatable {
  public struct Binding: Codable, Sendable, Equatable {
    /// The identities that claimed the serial, the bound one first; more than one is an alarm.
    public var identities: [String]
    /// When the serial was first bound (milliseconds since 1970).
    public var since: Int64

    public var isAlarm: Bool { identities.count > 1 }
  }

  /// One device seen in a cycle: the name the gateway reaches it by, its identity, and the serial
  /// it says.
  public struct Sighting: Sendable, Equatable {
    public var device: String
    public var identity: String
    public var serial: String
    public init(device: String, identity: String, serial: String) {
      self.device = device
      self.identity = identity
      self.serial = serial
    }
  }

  /// A serial more than one identity claims: none of them is served.
  public struct Alarm: Sendable, Equatable, CustomStringConvertible {
    public var serial: String
    /// Every identity that claimed it, the one it was first bound to first (when there was one).
    public var identities: [String]
    /// The devices that say the serial in this cycle.
    public var devices: [String]

    public init(serial: String, identities: [String], devices: [String]) {
      self.serial = serial
      self.identities = identities
      self.devices = devices
    }

    public var description: String {
      "serial \(serial) is claimed by \(identities.count) Bluetooth identities (\(identities.joined(separator: ", "))): "
        + "none is served as the target until an operator settles it (otactl gateway --rebind \(serial))"
    }
  }

  public private(set) var bindings: [String: Binding]

  public init(bindings: [String: Binding] = [:]) { self.bindings = bindings }

  /// The identity `serial` is bound to, nil when none or when it is in alarm.
  public func identity(of serial: String) -> String? {
    guard let binding = bindings[serial], !binding.isAlarm else { return nil }
    return binding.identities.first
  }

  /// Sorts one cycle's sightings into those to serve and the alarms, binding serials seen for the
  /// first time and recording every new claimant. `changed`: the bindings differ from before (to
  /// be saved before anything is served). `now`: milliseconds since 1970.
  public mutating func admit(_ sightings: [Sighting], now: Int64) -> (
    serve: [Sighting], alarms: [Alarm], changed: Bool
  ) {
    var serials: [String] = []
    var bySerial: [String: [Sighting]] = [:]
    for sighting in sightings {
      if bySerial[sighting.serial] == nil { serials.append(sighting.serial) }
      bySerial[sighting.serial, default: []].append(sighting)
    }
    var serve: [Sighting] = []
    var alarms: [Alarm] = []
    var changed = false
    for serial in serials {
      let group = bySerial[serial] ?? []
      var claimed: [String] = []
      for sighting in group where !claimed.contains(sighting.identity) { claimed.append(sighting.identity) }
      var binding = bindings[serial] ?? Binding(identities: claimed.sorted(), since: now)
      for identity in claimed where !binding.identities.contains(identity) {
        binding.identities.append(identity)
      }
      if bindings[serial] != binding {
        bindings[serial] = binding
        changed = true
      }
      if binding.isAlarm {
        alarms.append(Alarm(serial: serial, identities: binding.identities, devices: group.map(\.device)))
      } else {
        // One identity, the bound one: a device reached under two names is served once.
        serve.append(group[0])
      }
    }
    // A serial in alarm whose devices are all away this cycle is still said, every cycle.
    for (serial, binding) in bindings.sorted(by: { $0.key < $1.key })
    where binding.isAlarm && bySerial[serial] == nil {
      alarms.append(Alarm(serial: serial, identities: binding.identities, devices: []))
    }
    return (serve, alarms, changed)
  }

  /// Forgets `serial`'s binding and alarm: the next device seen saying it is bound. True when
  /// there was one.
  @discardableResult
  public mutating func forget(_ serial: String) -> Bool { bindings.removeValue(forKey: serial) != nil }
}
