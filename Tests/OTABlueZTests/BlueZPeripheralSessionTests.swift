import OTADBus
import OTALink
import Testing

@testable import OTABlueZ

/// docs/PROTOCOL.md, "The session", against the fake bluetoothd of `BlueZPeripheralTests`: answers
/// need a subscription, a second central is refused while the first holds the session, the MTU of
/// a read counts.
extension BlueZPeripheralTests {
  static let otherDevice: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"

  func write(_ bytes: [UInt8], from device: DBusObjectPath, mtu: UInt16) throws {
    _ = try call(
      app.controlPoint, BlueZ.gattCharacteristic, "WriteValue",
      [.bytes(bytes), .vardict(["device": .objectPath(device), "mtu": .uint16(mtu)])])
  }

  /// The control point's notifications bluetoothd was asked to send, once a round trip to the
  /// peripheral is done (a signal it sent before its reply arrives before the reply).
  func notifications() throws -> [[UInt8]] {
    _ = try call(app.info, BlueZ.gattCharacteristic, "ReadValue", [.vardict([:])])
    return signals.filter { $0.path == app.controlPoint }.compactMap {
      try? $0.arguments[1].vardict()["Value"]?.byteArray
    }
  }

  @Test func anAnswerBeforeTheCentralSubscribedIsDropped() throws {
    // [P-SESS-1]
    try write([0x02], from: Self.device, mtu: 247)
    peripheral.notify([0x60, 0x02, 0x00])
    #expect(try notifications().isEmpty, "nobody subscribed: nothing goes out, nothing is kept")
    _ = try call(app.controlPoint, BlueZ.gattCharacteristic, "StartNotify")
    #expect(try notifications().isEmpty, "the earlier answer is not sent late")
    peripheral.notify([0x60, 0x02, 0x00])
    #expect(try notifications() == [[0x60, 0x02, 0x00]])
  }

  @Test func aSecondCentralIsRefusedWhileTheFirstHoldsTheSessionAndTakesOverOnceItIsQuiet() throws {
    // [P-SESS-2] [P-TIME-11] [SEC-CHECK-5] [SEC-ATK-31]
    _ = try call(app.controlPoint, BlueZ.gattCharacteristic, "StartNotify")
    try write([0x02], from: Self.device, mtu: 247)
    // The other central's write is refused at the ATT level ("procedure already in progress"): it
    // reaches neither the session nor the device's idea of the connection.
    #expect(
      throws: DBusError.named("org.bluez.Error.InProgress", message: "another central is updating the device")
    ) {
      try self.write([0x06], from: Self.otherDevice, mtu: 185)
    }
    // Its reads are answered, for its own MTU, and make it no OTA central either.
    _ = try call(
      app.info, BlueZ.gattCharacteristic, "ReadValue",
      [.vardict(["device": .objectPath(Self.otherDevice), "mtu": .uint16(185)])])
    #expect(readMTUs.last == 185)
    #expect(events == [.connected(mtu: 247), .controlWrite([0x02])])
    // No timer runs for either central while they say nothing.
    #expect(peripheral.nextDeadline == nil)
    // 30 s after the first central's last write, the second may take the service over.
    loopTime = .seconds(30)
    events.removeAll()
    try write([0x02], from: Self.otherDevice, mtu: 185)
    #expect(events == [.connected(mtu: 185), .controlWrite([0x02])])
    // Only the central that holds the service ends it by leaving.
    events.removeAll()
    try bluez.emitPropertiesChanged(
      path: Self.device, interface: BlueZ.device, changed: ["Connected": .boolean(false)])
    _ = try notifications()
    #expect(events.isEmpty, "the first central leaving does not end the second's session")
    try bluez.emitPropertiesChanged(
      path: Self.otherDevice, interface: BlueZ.device, changed: ["Connected": .boolean(false)])
    try pump { !self.events.isEmpty }
    #expect(events == [.disconnected])
  }

  @Test func aReadBeforeTheMTUExchangeIsAConnectionAt23() throws {
    // [P-SESS-4] [P-INFO-13]
    _ = try call(
      app.info, BlueZ.gattCharacteristic, "ReadValue",
      [.vardict(["device": .objectPath(Self.device), "mtu": .uint16(23)])])
    try write([0x02], from: Self.device, mtu: 247)
    // The device hears of 23 first: the smallest MTU of the connection (ReceiverEngine keeps it).
    #expect(events == [.connected(mtu: 23), .connected(mtu: 247), .controlWrite([0x02])])
    #expect(readMTUs == [23])
  }
}
