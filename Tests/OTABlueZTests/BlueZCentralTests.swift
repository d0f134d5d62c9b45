import DBusTestSupport
import Logging
import OTADBus
import OTALink
import Testing

@testable import OTABlueZ

#if canImport(Glibc)
  import Glibc
#endif

/// The central's IO shell against a fake bluetoothd on a private bus: that the machine's calls go
/// out as real D-Bus calls without blocking, that replies and signals come back in, and that the
/// data socket AcquireWrite hands over carries the chunks.
@Suite(.enabled(if: PrivateBus.isAvailable)) final class BlueZCentralTests {
  let bus: PrivateBus
  let bluez: DBusConnection
  let central: BlueZCentral
  let clock = ContinuousClock()
  let start: ContinuousClock.Instant
  /// The fake bluetoothd's end of the data socket.
  var deviceEnd: Int32 = -1
  var controlWrites: [[UInt8]] = []
  var methods: [String] = []
  static let adapter: DBusObjectPath = "/org/bluez/hci0"
  static let device: DBusObjectPath = "/org/bluez/hci0/dev_11_22_33_44_55_66"
  static let info = Array(UInt8(0)..<60)

  init() throws {
    bus = try PrivateBus()
    start = clock.now
    bluez = try DBusConnection(address: bus.address)
    _ = try bluez.requestName("org.bluez")
    try bluez.addObjectManager(at: .root)
    central = try BlueZCentral(
      connection: try DBusConnection(address: bus.address), selector: .anyOTADevice, queueDepth: 4,
      logger: Logger(label: "test"))
    try exportBlueZ()
  }

  deinit {
    if deviceEnd >= 0 { close(deviceEnd) }
    bus.stop()
  }

  var now: Duration { clock.now - start }

  func recorded(
    _ name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [],
    _ answer: @escaping () -> [DBusValue] = { [] }
  )
    -> DBusMethod
  {
    DBusMethod(name, inputs: inputs, outputs: outputs) { [unowned self] _ in
      methods.append(name)
      return answer()
    }
  }

  func exportBlueZ() throws {
    let options = DBusArgument("options", "a{sv}")
    try bluez.export(
      DBusObject(
        path: Self.adapter,
        interfaces: [
          DBusInterface(
            BlueZ.adapter,
            methods: [
              recorded("SetDiscoveryFilter", inputs: [DBusArgument("filter", "a{sv}")]),
              recorded("StartDiscovery"), recorded("StopDiscovery"),
              recorded("RemoveDevice", inputs: [DBusArgument("device", "o")]),
            ])
        ]))
    try bluez.export(
      DBusObject(
        path: Self.device,
        interfaces: [
          DBusInterface(
            BlueZ.device,
            methods: [
              DBusMethod("Connect") { [unowned self] (_) throws(DBusError) in
                methods.append("Connect")
                try bluez.setProperty(
                  "Connected", interface: BlueZ.device, path: Self.device, to: .boolean(true))
                try bluez.setProperty(
                  "ServicesResolved", interface: BlueZ.device, path: Self.device, to: .boolean(true))
                return []
              },
              recorded("Disconnect"),
            ],
            properties: [
              DBusProperty("Address", value: .string("11:22:33:44:55:66")),
              DBusProperty("Name", value: .string("ota-device")),
              DBusProperty("RSSI", value: .int16(-60)),
              DBusProperty("UUIDs", value: .strings([OTAUUID.service])),
              DBusProperty("Connected", value: .boolean(false)),
              DBusProperty("ServicesResolved", value: .boolean(false)),
            ])
        ]))
    let service = Self.device.appending("service0010")
    try bluez.export(
      DBusObject(
        path: service.appending("char0011"),
        interfaces: [
          DBusInterface(
            BlueZ.gattCharacteristic,
            methods: [
              recorded("StartNotify"),
              DBusMethod("WriteValue", inputs: [DBusArgument("value", "ay"), options]) {
                [unowned self] call in
                controlWrites.append(call.arguments.first?.byteArray ?? [])
                return []
              },
            ],
            properties: [
              DBusProperty("UUID", value: .string(OTAUUID.controlPoint)),
              DBusProperty("Flags", value: .strings(["write", "notify"])),
              DBusProperty("Value", value: .bytes([])),
            ])
        ]))
    try bluez.export(
      DBusObject(
        path: service.appending("char0013"),
        interfaces: [
          DBusInterface(
            BlueZ.gattCharacteristic,
            methods: [
              DBusMethod(
                "AcquireWrite", inputs: [options],
                outputs: [DBusArgument("fd", "h"), DBusArgument("mtu", "q")]
              ) { [unowned self] (_) throws(DBusError) in
                var ends: [Int32] = [-1, -1]
                guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) == 0 else {
                  throw DBusError.failed("socketpair")
                }
                deviceEnd = ends[1]
                return [.unixFD(DBusFileDescriptor(taking: ends[0])), .uint16(517)]
              }
            ],
            properties: [
              DBusProperty("UUID", value: .string(OTAUUID.data)),
              DBusProperty("Flags", value: .strings(["write-without-response"])),
            ])
        ]))
    try bluez.export(
      DBusObject(
        path: service.appending("char0015"),
        interfaces: [
          DBusInterface(
            BlueZ.gattCharacteristic,
            methods: [
              DBusMethod("ReadValue", inputs: [options], outputs: [DBusArgument("value", "ay")]) { _ in
                [.bytes(Self.info)]
              }
            ],
            properties: [
              DBusProperty("UUID", value: .string(OTAUUID.info)),
              DBusProperty("Flags", value: .strings(["read"])),
            ])
        ]))
  }

  /// Runs the central's loop and the fake bluetoothd until `done` holds for what the central said.
  @discardableResult
  func pump(until done: ([CentralEvent]) -> Bool) throws -> [CentralEvent] {
    var events: [CentralEvent] = []
    let deadline = clock.now + .seconds(5)
    while !done(events) {
      guard clock.now < deadline else { throw DBusError.named("test.Timeout", message: "events: \(events)") }
      _ = bluez.process()
      events += central.service(readable: [], now: now)
      usleep(1000)
    }
    return events
  }

  /// What arrived on the device's end of the data socket so far.
  func received() -> [[UInt8]] {
    var packets: [[UInt8]] = []
    var buffer = [UInt8](repeating: 0, count: 600)
    while true {
      let count = buffer.withUnsafeMutableBytes {
        recv(deviceEnd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
      }
      guard count > 0 else { return packets }
      packets.append(Array(buffer[0..<count]))
    }
  }

  @Test func connectsWritesReadsAndHearsNotifications() throws {
    central.connect(now: now)
    let connected = try pump { $0.contains(.connected(mtu: 517)) }
    #expect(!connected.contains { if case .connectFailed = $0 { true } else { false } })
    // The device was announced (InterfacesAdded) while the filter was being set: no StartDiscovery
    // is needed then, and discovery is stopped before connecting.
    #expect(Array(methods.prefix(3)) == ["SetDiscoveryFilter", "StopDiscovery", "Connect"])
    #expect(methods.contains("Connect") && methods.contains("StartNotify"))
    #expect(central.readyAt != nil && central.connectStartedAt != nil)
    #expect(central.seen[Self.device]?.address == "11:22:33:44:55:66")

    for packet in [[1, 2, 3], [4, 5]] as [[UInt8]] { central.writeData(packet) }
    central.writeControl([0x01])
    central.readInfo()
    try pump { $0.contains(.info(Self.info)) }
    try pump { _ in !self.controlWrites.isEmpty }
    #expect(controlWrites == [[0x01]])
    // The prime byte first, then the chunks, one write each.
    #expect(received() == [[0], [1, 2, 3], [4, 5]])

    try bluez.setProperty(
      "Value", interface: BlueZ.gattCharacteristic,
      path: Self.device.appending("service0010").appending("char0011"),
      to: .bytes([0x81, 0]))
    try pump { $0.contains(.notification([0x81, 0])) }

    try bluez.setProperty("Connected", interface: BlueZ.device, path: Self.device, to: .boolean(false))
    try pump { $0.contains(.disconnected("the device disconnected")) }
  }

  @Test func missingCharacteristicsFailTheConnectAndDisconnectStillDropsTheLink() throws {
    bluez.unexport(Self.device.appending("service0010").appending("char0015"))
    // The objects' announcements reach the central while it is idle: the device is known, not chosen.
    for _ in 0..<50 {
      _ = bluez.process()
      _ = central.service(readable: [], now: now)
      usleep(1000)
    }
    central.connect(now: now)
    // Connected, but without Info: the connect fails once the characteristics are late.
    let events = try pump { !$0.isEmpty && !$0.allSatisfy { if case .writable = $0 { true } else { false } } }
    #expect(events.last == .connectFailed("the device does not offer the OTA characteristics"))
    // A known device is connected to directly, from GetManagedObjects after StartDiscovery.
    #expect(Array(methods.prefix(4)) == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery", "Connect"])
    central.disconnect()
    try pump { _ in self.methods.contains("Disconnect") }
  }
}
