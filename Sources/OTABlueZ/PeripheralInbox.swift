import OTADBus
import OTALink
import OTASystem
import OTAWire

/// What the GATT handlers saw, kept for `BlueZPeripheral.service` to hand on. Owned by the loop's
/// thread: handlers run inside `DBusConnection.process()`, on that thread.
final class PeripheralInbox {
  var events: [PeripheralEvent] = []
  /// A central asked for notifications on the control point (StartNotify).
  var notifying = false
  var advertisementReleased = false
  /// The central being served and the MTU BlueZ reported for it.
  var device: DBusObjectPath?
  var mtu: Int?
  /// Our end of the socket pair handed to BlueZ by AcquireWrite: every data write arrives here.
  var dataSocket: FileDescriptor?
  /// Gives a characteristic's value for reads; set only while the loop processes D-Bus traffic.
  var valueProvider: CharacteristicValue?
  /// A central asked for notifications on the SMP characteristic.
  var smpNotifying = false
  /// The centrals that wrote to the SMP characteristic and are still connected, with their MTU.
  var smpCentrals: [DBusObjectPath: Int] = [:]
  /// The Nordic DFU control points a central asked notifications of, and which central writes to each.
  var nordicDFUNotifying: Set<NordicDFUService> = []
  var nordicDFUCentrals: [NordicDFUService: DBusObjectPath] = [:]
  /// Told when BlueZ acquires the data socket (for logs).
  var onAcquireWrite: ((Int) -> Void)?

  /// Every call from BlueZ carries the device and the MTU: a new device, or a new MTU, is a
  /// connection as far as the protocol is concerned.
  func noteOptions(_ options: [String: DBusValue]) {
    let device = options["device"]?.objectPathValue ?? self.device
    let mtu = options["mtu"]?.uint16Value.map(Int.init) ?? self.mtu ?? ATTMTU.minimum.value
    if device != self.device || mtu != self.mtu {
      self.device = device
      self.mtu = mtu
      events.append(.connected(mtu: ATTMTU(clamping: mtu)))
    }
  }

  func controlWrite(_ value: [UInt8], _ options: [String: DBusValue]) {
    noteOptions(options)
    events.append(.controlWrite(value))
  }

  func dataWrite(_ value: [UInt8], _ options: [String: DBusValue]) {
    noteOptions(options)
    events.append(.dataWrite(value))
  }

  /// A piece of an SMP message. It says nothing about the OTA central: SMP centrals are kept apart,
  /// by the device path BlueZ passes with every write.
  func smpWrite(_ value: [UInt8], _ options: [String: DBusValue]) {
    let device = options["device"]?.objectPathValue ?? "/unknown"
    let mtu = options["mtu"]?.uint16Value.map(Int.init) ?? smpCentrals[device] ?? ATTMTU.minimum.value
    smpCentrals[device] = mtu
    events.append(.smpWrite(central: device.rawValue, mtu: ATTMTU(clamping: mtu), bytes: value))
  }

  /// A write to a Nordic DFU control point or packet characteristic. A write from another central
  /// than the one under way is a new session (the first one's central is taken to have gone).
  func nordicDFUWrite(
    _ service: NordicDFUService, _ value: [UInt8], _ options: [String: DBusValue], control: Bool
  ) {
    let device = options["device"]?.objectPathValue ?? "/unknown"
    if let current = nordicDFUCentrals[service], current != device {
      events.append(.nordicDFUCentralGone(service))
    }
    nordicDFUCentrals[service] = device
    events.append(control ? .nordicDFUControl(service, value) : .nordicDFUPacket(service, value))
  }

  /// A device disconnected: the Nordic DFU sessions it was the central of end.
  func forgetNordicDFUCentral(_ device: DBusObjectPath) {
    for (service, central) in nordicDFUCentrals.sorted(by: { $0.key.rawValue < $1.key.rawValue })
    where central == device {
      nordicDFUCentrals[service] = nil
      nordicDFUNotifying.remove(service)
      events.append(.nordicDFUCentralGone(service))
    }
  }

  /// An SMP central disconnected (or bluetoothd went away with all of them).
  func forgetSMPCentral(_ device: DBusObjectPath) {
    guard smpCentrals.removeValue(forKey: device) != nil else { return }
    events.append(.smpCentralGone(central: device.rawValue))
  }

  /// Hands BlueZ one end of a fresh packet socket pair; every write to the data characteristic will
  /// arrive on the other end, one packet per ATT write.
  func acquireWrite(_ options: [String: DBusValue]) throws(DBusError) -> [DBusValue] {
    noteOptions(options)
    closeDataSocket()
    let ours: FileDescriptor
    let theirs: FileDescriptor
    do {
      (ours, theirs) = try FileDescriptor.unixSocketPair(.sequencedPacket, nonBlocking: true)
    } catch {
      throw .named("org.bluez.Error.Failed", message: "socketpair: \(error.errno)")
    }
    dataSocket = ours
    onAcquireWrite?(mtu ?? ATTMTU.minimum.value)
    return [.unixFD(DBusFileDescriptor(theirs)), .uint16(UInt16(clamping: mtu ?? ATTMTU.minimum.value))]
  }

  /// A read at the offset BlueZ asks for (long reads come as several calls). The value is the one
  /// for the MTU that came with the read: a central's first read on a connection comes before the
  /// `.connected` event reaches the device, and Info's max chunk payload must already be right.
  func read(_ characteristic: Characteristic, _ options: [String: DBusValue]) throws(DBusError) -> [UInt8] {
    noteOptions(options)
    let value = valueProvider?(characteristic, mtu.map(ATTMTU.init(clamping:)) ?? .minimum) ?? []
    let offset = Int(options["offset"]?.uint16Value ?? 0)
    guard offset <= value.count else {
      throw .named("org.bluez.Error.InvalidOffset", message: "offset \(offset) past \(value.count) bytes")
    }
    return Array(value[offset...])
  }

  /// The central went away: forget it, its MTU and its data socket.
  func forgetCentral() {
    device = nil
    mtu = nil
    notifying = false
    closeDataSocket()
  }

  func closeDataSocket() {
    try? dataSocket?.close()
    dataSocket = nil
  }
}
