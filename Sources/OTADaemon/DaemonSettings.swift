import OTAStorage
import OTAWire

extension DeviceLayout {
  /// The slots and the state directory the configuration names; throws what is missing or unusable,
  /// with the flag and the key that set it.
  public init(parsing configuration: DaemonConfiguration) throws(ConfigurationError) {
    guard let slotA = configuration.slotA, let slotB = configuration.slotB else {
      throw ConfigurationError("both slots are needed: --slot-a and --slot-b (or [slots] a and b)")
    }
    guard !slotA.isEmpty, !slotB.isEmpty else {
      throw ConfigurationError(
        "a slot's path is empty: give --slot-a and --slot-b (or [slots] a and b) a path")
    }
    guard slotA != slotB else { throw ConfigurationError("slot A and slot B are the same path: \(slotA)") }
    guard let stateDirectory = configuration.stateDirectory, !stateDirectory.isEmpty else {
      throw ConfigurationError("a state directory is needed: --state-dir (or [state] directory)")
    }
    if let capacity = configuration.slotCapacity, capacity == 0 || capacity > UInt64(UInt32.max) {
      throw ConfigurationError(
        "the slot capacity must be 1 byte to 4 GiB - 1 (the protocol's sizes are 32-bit), not \(capacity) "
          + "(--capacity or [slots] capacity)")
    }
    self.init(
      slots: SlotPair(a: slotA, b: slotB), slotCapacity: configuration.slotCapacity,
      stateDirectory: stateDirectory)
  }
}

/// How the daemon talks to centrals: through bluetoothd on an adapter, or the simulated link.
public enum DeviceLink: Equatable, Sendable {
  /// Serve through bluetoothd on this adapter (e.g. hci0).
  case bluetooth(adapter: String)
  /// The simulated link: a Unix socket at this path, the device's address for otactl.
  case socket(path: String)

  /// Through bluetoothd: the link that can carry the SMP service.
  public var isBluetooth: Bool {
    if case .bluetooth = self { true } else { false }
  }

  /// The link the configuration names (Bluetooth wins over the socket); throws when it names none.
  public init(parsing configuration: DaemonConfiguration) throws(ConfigurationError) {
    if let adapter = configuration.bluezAdapter {
      self = .bluetooth(adapter: adapter)
    } else if let path = configuration.socket {
      self = .socket(path: path)
    } else {
      throw ConfigurationError(
        "a link is needed: --adapter hci0 for Bluetooth (or [bluez] adapter), or --socket PATH for the simulated link"
      )
    }
  }
}

/// Everything `otad run` needs, parsed: the layout, the link, and the rest of the configuration
/// (names, window, boot, trust, logging), checked.
public struct DaemonSettings: Sendable {
  public let layout: DeviceLayout
  public let link: DeviceLink
  public let configuration: DaemonConfiguration

  /// Parses in the order users see the complaints: slots, state, capacity, link, window, boot.
  public init(parsing configuration: DaemonConfiguration) throws(ConfigurationError) {
    layout = try DeviceLayout(parsing: configuration)
    link = try DeviceLink(parsing: configuration)
    guard configuration.windowCapacity >= 64, configuration.windowCapacity <= 16 << 20 else {
      throw ConfigurationError("the window must be 64 bytes to 16 MiB, not \(configuration.windowCapacity)")
    }
    guard configuration.faults.isEmpty || configuration.faultsAllowed else {
      throw ConfigurationError(
        "faults are set (\(configuration.faults.map(\.description).joined(separator: "; "))) but not allowed: "
          + "set [faults] allow = true (or --allow-faults) on a test device; a product must not ship with them"
      )
    }
    self.configuration = try configuration.validatedBoot()
  }
}
