import DBusTestSupport
import Logging
import OTADBus
import OTALink
import OTASystem
import OTASystemTesting
import OTAWire
import Testing

@testable import OTABlueZ

#if canImport(Glibc)
  import Glibc
#endif

/// The device role against a fake bluetoothd on a private bus: the GATT tree BlueZ would read, and
/// the calls BlueZ makes when a central writes, reads and acquires the data socket.
@Suite(.enabled(if: PrivateBus.isAvailable)) final class BlueZPeripheralTests {
  let bus: PrivateBus
  let bluez: DBusConnection
  let peripheral: BlueZPeripheral
  let clock = ContinuousClock()
  var registrations: [String] = []
  var events: [PeripheralEvent] = []
  var signals: [DBusSignal] = []
  /// The MTU each read was answered for, in order.
  var readMTUs: [Int] = []
  /// The loop's time the peripheral is served at.
  var loopTime: Duration = .zero
  static let device: DBusObjectPath = "/org/bluez/hci0/dev_11_22_33_44_55_66"
  static let info: [UInt8] = Array(0..<30)

  convenience init() throws { try self.init(smp: false) }

  /// `smp`: the GATT application carries the SMP service too (BlueZPeripheralSMPTests).
  init(smp: Bool) throws {
    bus = try PrivateBus()
    bluez = try DBusConnection(address: bus.address)
    _ = try bluez.requestName("org.bluez")
    peripheral = try BlueZPeripheral(
      connection: try DBusConnection(address: bus.address),
      options: .init(adapter: "hci0", localName: "Test", smp: smp),
      logger: Logger(label: "test"))
    try bluez.addMatch(.signals(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
    let recorder: (String) -> DBusMethod = { name in
      DBusMethod(name, inputs: [DBusArgument("path", "o"), DBusArgument("options", "a{sv}")]) {
        [unowned self] _ in
        registrations.append(name)
        return []
      }
    }
    try bluez.export(
      DBusObject(
        path: "/org/bluez/hci0",
        interfaces: [
          DBusInterface(BlueZ.gattManager, methods: [recorder("RegisterApplication")]),
          DBusInterface(BlueZ.advertisingManager, methods: [recorder("RegisterAdvertisement")]),
        ]))
    try pump { self.registrations.count == 2 }
  }

  deinit { bus.stop() }

  /// What otad's loop gives for a read: Info (a fixed test value), and the MTU it was asked for.
  func value(_ characteristic: Characteristic, _ mtu: ATTMTU) -> [UInt8] {
    readMTUs.append(mtu.value)
    return characteristic == .info ? Self.info : []
  }

  /// Runs both ends (the peripheral as otad's loop does, the fake bluetoothd) until `done`.
  func pump(until done: () -> Bool) throws {
    let deadline = clock.now + .seconds(5)
    while !done() {
      guard clock.now < deadline else { throw DBusError.named("test.Timeout", message: "pump timed out") }
      let readable = try Poller.wait(
        for: peripheral.descriptors + [bluez.descriptor], timeout: .milliseconds(20))
      events += try peripheral.service(readable: readable, now: loopTime) { characteristic, mtu in
        self.value(characteristic, mtu)
      }
      for event in bluez.process() {
        if case .signal(let signal) = event { signals.append(signal) }
      }
    }
  }

  func call(_ path: DBusObjectPath, _ interface: String, _ method: String, _ arguments: [DBusValue] = [])
    throws
    -> [DBusValue]
  {
    let serial = try bluez.startCall(
      destination: peripheral.connection.uniqueName, path: path, interface: interface, method: method,
      arguments: arguments)
    var result: Result<[DBusValue], DBusError>?
    let deadline = clock.now + .seconds(5)
    while result == nil, clock.now < deadline {
      let readable = try Poller.wait(
        for: peripheral.descriptors + [bluez.descriptor], timeout: .milliseconds(20))
      events += try peripheral.service(readable: readable, now: loopTime) { characteristic, mtu in
        self.value(characteristic, mtu)
      }
      for event in bluez.process() {
        switch event {
        case .reply(serial, let reply): result = reply
        case .signal(let signal): signals.append(signal)
        default: break
        }
      }
    }
    return try #require(result).get()
  }

  var app: GattApplication { peripheral.application }

  @Test func registersTheApplicationAndTheAdvertisement() {
    #expect(registrations.sorted() == ["RegisterAdvertisement", "RegisterApplication"])
  }

  @Test func theGattTreeIsWhatBlueZReads() throws {
    let reply = try call("/org/blueota", DBusStandardInterface.objectManager, "GetManagedObjects")
    var flags: [String: [String]] = [:]
    var writeAcquired: [String: Bool] = [:]
    for entry in reply.first?.dictionaryEntries ?? [] {
      for interface in entry.value.dictionaryEntries ?? []
      where interface.key.stringValue == BlueZ.gattCharacteristic {
        let properties = try interface.value.vardict()
        let uuid = try #require(properties["UUID"]?.stringValue)
        flags[uuid] = properties["Flags"]?.stringArray
        writeAcquired[uuid] = properties["WriteAcquired"] != nil
      }
    }
    #expect(flags[OTAUUID.controlPoint] == ["write", "notify"])
    #expect(flags[OTAUUID.data] == ["write-without-response", "write"])
    #expect(flags[OTAUUID.info] == ["read"] && flags[OTAUUID.firmwareRevision] == ["read"])
    #expect(flags[OTAUUID.blockHashes] == ["read"])
    #expect(flags[OTAUUID.l2capPSM] == ["read"], "the L2CAP channel's PSM, where Apple's convention puts it")
    #expect(writeAcquired[OTAUUID.data] == true, "the data characteristic takes the AcquireWrite fast path")
    #expect(writeAcquired[OTAUUID.controlPoint] == false, "the control point stays on WriteValue")
  }

  @Test func aControlWriteIsAConnectionAndACommandAndNotificationsGoBack() throws {
    _ = try call(app.controlPoint, BlueZ.gattCharacteristic, "StartNotify")
    _ = try call(
      app.controlPoint, BlueZ.gattCharacteristic, "WriteValue",
      [
        .bytes([0x02]),
        .vardict(["device": .objectPath(Self.device), "mtu": .uint16(247), "link": .string("LE")]),
      ])
    #expect(events == [.connected(mtu: 247), .controlWrite([0x02])])
    peripheral.notify([0x60, 0x02, 0x00])
    try pump { self.signals.contains { $0.path == self.app.controlPoint } }
    let signal = try #require(signals.first { $0.path == app.controlPoint })
    let changed = try signal.arguments[1].vardict()
    #expect(changed["Value"]?.byteArray == [0x60, 0x02, 0x00])
  }

  @Test func acquireWriteHandsOverAPacketSocketForData() throws {
    let reply = try call(
      app.data, BlueZ.gattCharacteristic, "AcquireWrite",
      [.vardict(["device": .objectPath(Self.device), "mtu": .uint16(517)])])
    #expect(reply.count == 2 && reply[1].uint16Value == 517)
    let socket = try #require(reply[0].fileDescriptor)
    for packet: [UInt8] in [[0, 0, 0, 0, 1, 2, 3], [16, 0, 0, 0, 9]] {
      _ = packet.withUnsafeBytes { send(socket.rawValue, $0.baseAddress, $0.count, 0) }
    }
    try pump { self.events.count >= 3 }
    #expect(
      events == [.connected(mtu: 517), .dataWrite([0, 0, 0, 0, 1, 2, 3]), .dataWrite([16, 0, 0, 0, 9])])
  }

  /// A kernel without Bluetooth sockets (or one that refuses the listener) leaves the device on
  /// GATT: PSM 0, no descriptor of a channel, nothing thrown.
  @Test func aChannelTheKernelRefusesLeavesThePSMZero() throws {
    // [P-CHAN-2] [SEC-ATK-59]
    let trace = SystemCallTrace(rules: [.init(.socket, path: "l2cap", .fail(.familyNotSupported))])
    let refused = try trace.run {
      try BlueZPeripheral(
        connection: try DBusConnection(address: bus.address),
        options: .init(adapter: "hci0", localName: "Test", root: "/org/blueota2", l2capPSM: 0),
        logger: Logger(label: "test"))
    }
    #expect(refused.dataChannelPSM == 0 && refused.dataChannel == nil)
    #expect(trace.lines.contains("socket l2cap -> EAFNOSUPPORT"))
    #expect(peripheral.dataChannelPSM == 0, "no channel unless asked for")
  }

  @Test func readsHonourTheOffsetAndRefuseOnePastTheEnd() throws {
    // [P-INFO-3]
    let whole = try call(app.info, BlueZ.gattCharacteristic, "ReadValue", [.vardict([:])])
    #expect(whole.first?.byteArray == Self.info)
    let tail = try call(app.info, BlueZ.gattCharacteristic, "ReadValue", [.vardict(["offset": .uint16(22)])])
    #expect(tail.first?.byteArray == Array(Self.info[22...]))
    #expect(throws: DBusError.self) {
      _ = try self.call(app.info, BlueZ.gattCharacteristic, "ReadValue", [.vardict(["offset": .uint16(31)])])
    }
  }

  /// PROTOCOL.md, Info: "max chunk payload u16 at the current MTU", right from a connection's first
  /// read. BlueZ passes the MTU in ReadValue's options; a central that reads Info before any write
  /// (a resuming one has nothing else to size its chunks by) gets the value for that MTU.
  @Test func aFirstReadIsAnsweredForTheMTUItCameWith() throws {
    // [P-INFO-13] [P-SESS-4]
    let options: [String: DBusValue] = ["device": .objectPath(Self.device), "mtu": .uint16(517)]
    _ = try call(app.info, BlueZ.gattCharacteristic, "ReadValue", [.vardict(options)])
    #expect(readMTUs == [517], "the value was asked for at the read's own MTU, before any write")
    #expect(events == [.connected(mtu: 517)])
    _ = try call(
      app.info, BlueZ.gattCharacteristic, "ReadValue",
      [.vardict(["device": .objectPath(Self.device), "mtu": .uint16(517), "offset": .uint16(22)])])
    #expect(readMTUs == [517, 517])
    #expect(events == [.connected(mtu: 517)], "the same central at the same MTU is one connection")
  }

  @Test func theCentralDisconnectingIsADisconnect() throws {
    _ = try call(
      app.controlPoint, BlueZ.gattCharacteristic, "WriteValue",
      [.bytes([0x02]), .vardict(["device": .objectPath(Self.device), "mtu": .uint16(185)])])
    events.removeAll()
    try bluez.emitPropertiesChanged(
      path: Self.device, interface: BlueZ.device, changed: ["Connected": .boolean(false)])
    try pump { !self.events.isEmpty }
    #expect(events == [.disconnected])
  }
  /// A central writing data without pause: each turn of the loop takes at most
  /// `packetsPerTurn`, so the loop gets back to its other descriptors; nothing is lost.
  @Test func aFloodOfDataPacketsIsReadInTurnsAndNoneIsLost() throws {
    // [SEC-ATK-51]
    let reply = try call(
      app.data, BlueZ.gattCharacteristic, "AcquireWrite",
      [.vardict(["device": .objectPath(Self.device), "mtu": .uint16(517)])])
    let socket = try #require(reply.first?.fileDescriptor)
    events.removeAll()
    var sent = 0
    while sent < 10_000 {
      let packet: [UInt8] = [UInt8(truncatingIfNeeded: sent), 0, 0, 0, 1]
      let count = packet.withUnsafeBytes {
        send(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
      }
      guard count > 0 else { break }
      sent += 1
    }
    try #require(sent > BlueZPeripheral.packetsPerTurn, "the socket holds more than one turn's packets")
    let readable = try Poller.wait(for: peripheral.descriptors, timeout: .seconds(1))
    let first = try peripheral.service(readable: readable, now: .zero) { _, _ in [] }
    #expect(first.count == BlueZPeripheral.packetsPerTurn)
    events = first
    try pump { self.events.count >= sent }
    #expect(events.count == sent)
    #expect(
      events.enumerated().allSatisfy {
        $0.element == .dataWrite([UInt8(truncatingIfNeeded: $0.offset), 0, 0, 0, 1])
      })
  }

  /// A stop must not hang on a bluetoothd that does not answer: unregistering waits half a second
  /// at most (this fake bluetoothd does not even read its messages now).
  @Test func unregisteringDoesNotWaitLongForABluetoothdThatDoesNotAnswer() {
    // [SEC-ATK-61]
    let took = clock.measure { peripheral.unregister() }
    #expect(took < .seconds(1), "took \(took)")
    #expect(took >= .milliseconds(400), "it waited for the answers that did not come")
  }
}
