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
  /// The Nordic DFU control points a central asked notifications of, and the centrals that wrote
  /// to each and are still connected (whose session is which is the daemon's business: the events
  /// name the central).
  var nordicDFUNotifying: Set<NordicDFUService> = []
  var nordicDFUCentrals: [NordicDFUService: Set<DBusObjectPath>] = [:]
  /// The loop's time, as `BlueZPeripheral.service` was last called.
  var now: Duration = .zero
  /// When the OTA central (`device`) last wrote: while it wrote within `otaLeaseTimeout` and is
  /// connected, another central's writes are refused (one OTA central at a time, as on the
  /// simulated link).
  var otaLastWrite: Duration?
  static let otaLeaseTimeout = Duration.seconds(30)
  /// Told when BlueZ acquires the data socket (for logs).
  var onAcquireWrite: ((Int) -> Void)?

  /// Every call from BlueZ carries the device and the MTU: a new device, or a new MTU, is a
  /// connection as far as the protocol is concerned.
  func noteOptions(_ options: [String: DBusValue]) {
    let device = options["device"]?.objectPathValue ?? self.device
    let mtu = options["mtu"]?.uint16Value.map(Int.init) ?? self.mtu ?? ATTMTU.minimum.value
    if device != self.device || mtu != self.mtu {
      if device != self.device { otaLastWrite = nil }
      self.device = device
      self.mtu = mtu
      events.append(.connected(mtu: ATTMTU(clamping: mtu)))
    }
  }

  /// True while a central other than the one the options name holds the OTA service: it is
  /// connected and wrote within `otaLeaseTimeout`.
  func otaHeldByAnother(_ options: [String: DBusValue]) -> Bool {
    guard let current = device, let writer = options["device"]?.objectPathValue, writer != current,
      let last = otaLastWrite
    else { return false }
    return now - last < Self.otaLeaseTimeout
  }

  /// A write to the OTA service: refused at the ATT level (bluetoothd answers "procedure already in
  /// progress", 0xFE) while another central holds it, so that no central can end or spoil a
  /// session it does not own.
  private func admitOTAWrite(_ options: [String: DBusValue]) throws(DBusError) {
    if otaHeldByAnother(options) {
      throw .named("org.bluez.Error.InProgress", message: "another central is updating the device")
    }
    noteOptions(options)
    otaLastWrite = now
  }

  func controlWrite(_ value: [UInt8], _ options: [String: DBusValue]) throws(DBusError) {
    try admitOTAWrite(options)
    events.append(.controlWrite(value))
  }

  func dataWrite(_ value: [UInt8], _ options: [String: DBusValue]) throws(DBusError) {
    try admitOTAWrite(options)
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

  /// A write to a Nordic DFU control point or packet characteristic, with the central that wrote
  /// it: whose session it belongs to is the daemon's to decide.
  func nordicDFUWrite(
    _ service: NordicDFUService, _ value: [UInt8], _ options: [String: DBusValue], control: Bool
  ) {
    let device = options["device"]?.objectPathValue ?? "/unknown"
    nordicDFUCentrals[service, default: []].insert(device)
    events.append(
      control
        ? .nordicDFUControl(service, central: device.rawValue, value)
        : .nordicDFUPacket(service, central: device.rawValue, value))
  }

  /// A device disconnected: each Nordic DFU service it wrote to hears that it went.
  func forgetNordicDFUCentral(_ device: DBusObjectPath) {
    for service in nordicDFUCentrals.keys.sorted(by: { $0.rawValue < $1.rawValue })
    where nordicDFUCentrals[service]?.contains(device) == true {
      nordicDFUCentrals[service]?.remove(device)
      if nordicDFUCentrals[service]?.isEmpty == true {
        nordicDFUCentrals[service] = nil
        nordicDFUNotifying.remove(service)
      }
      events.append(.nordicDFUCentralGone(service, central: device.rawValue))
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
    try admitOTAWrite(options)
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
    // Anyone may read; a read by another central while one holds the OTA service does not make it
    // the OTA central (its value is for its own MTU).
    var readerMTU = mtu
    if otaHeldByAnother(options) {
      readerMTU = options["mtu"]?.uint16Value.map(Int.init) ?? ATTMTU.minimum.value
    } else {
      noteOptions(options)
      readerMTU = mtu
    }
    let value = valueProvider?(characteristic, readerMTU.map(ATTMTU.init(clamping:)) ?? .minimum) ?? []
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
    otaLastWrite = nil
    notifying = false
    closeDataSocket()
  }

  func closeDataSocket() {
    try? dataSocket?.close()
    dataSocket = nil
  }
}
