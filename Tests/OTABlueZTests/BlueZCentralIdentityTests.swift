import OTADBus
import OTALink
import Testing

@testable import OTABlueZ

/// The BlueZ central reading the Device Information Service's identity strings (serial number,
/// model number, hardware revision), bluetoothd played by hand: one ReadValue each of those the
/// device serves, one `.identity` when all have ended, nil for what is missing or fails.
@Suite struct BlueZCentralIdentityTests {
  typealias Script = BlueZScript

  @Test func theThreeStringsAreFoundByUUIDAndReadOnce() throws {
    // [P-GATT-10] [P-GATT-11] [P-GATT-12]
    var script = Script()
    try script.connectToReady(identity: Characteristic.identity)
    _ = script.takeEmitted()
    #expect(script.machine.isReady)
    guard case .ready(let ready) = script.machine.phase else { return }
    #expect(ready.characteristics.identity == Script.identityPaths)

    script.feed(.readIdentity)
    for characteristic in Characteristic.identity {
      let read = try #require(script.pending(.readIdentity(characteristic))).request
      #expect(read.path == Script.identityPaths[characteristic])
      #expect(read.interface == BlueZ.gattCharacteristic && read.method == "ReadValue")
    }
    script.feed(.readIdentity)  // asked again while under way: nothing more
    #expect(script.outstanding.count == 3)
    script.reply(.readIdentity(.modelNumber), [.bytes(Array("rpi4".utf8))])
    script.reply(.readIdentity(.serialNumber), [.bytes(Array("0328b1e8c62c4027bc6dab2d336a8fcd".utf8))])
    #expect(script.takeEmitted().isEmpty, "one event, when all three have ended")
    script.reply(.readIdentity(.hardwareRevision), [.bytes(Array("1.0".utf8))])
    #expect(
      script.takeEmitted() == [
        .identity(
          DeviceIdentity(serial: "0328b1e8c62c4027bc6dab2d336a8fcd", model: "rpi4", hardwareRevision: "1.0"))
      ])
    #expect(script.outstanding.isEmpty)
  }

  @Test func aDeviceWithoutThemAnswersAllUnknownAtOnce() throws {
    var script = Script()
    try script.connectToReady()
    _ = script.takeEmitted()
    script.feed(.readIdentity)
    #expect(script.takeEmitted() == [.identity(DeviceIdentity())])
    #expect(script.outstanding.isEmpty)
  }

  @Test func aMissingOneIsUnknownAndTheOthersAreRead() throws {
    var script = Script()
    try script.connectToReady(identity: [.serialNumber])
    _ = script.takeEmitted()
    script.feed(.readIdentity)
    #expect(script.outstandingCalls == [.readIdentity(.serialNumber)])
    script.reply(.readIdentity(.serialNumber), [.bytes(Array("abc".utf8))])
    #expect(script.takeEmitted() == [.identity(DeviceIdentity(serial: "abc"))])
  }

  @Test func aFailedReadIsUnknownNotALostLink() throws {
    var script = Script()
    try script.connectToReady(identity: Characteristic.identity)
    _ = script.takeEmitted()
    script.feed(.readIdentity)
    let actions = script.fail(
      .readIdentity(.serialNumber), "org.bluez.Error.NotPermitted", "Read not permitted")
    #expect(actions.contains { if case .log(.info, _) = $0 { true } else { false } })
    script.reply(.readIdentity(.modelNumber), [.bytes(Array("rpi4".utf8))])
    script.reply(.readIdentity(.hardwareRevision), [.bytes([0xFF, 0xFE])])  // not UTF-8: unknown
    #expect(script.takeEmitted() == [.identity(DeviceIdentity(model: "rpi4"))])
    #expect(script.machine.isReady)
  }

  @Test func aLinkLostDuringTheReadsEndsThem() throws {
    var script = Script()
    try script.connectToReady(identity: Characteristic.identity)
    _ = script.takeEmitted()
    script.feed(.readIdentity)
    script.feed(
      .signal(Script.propertiesChanged(Script.device, BlueZ.device, ["Connected": .boolean(false)])))
    #expect(script.takeEmitted() == [.disconnected("the device disconnected")])
    #expect(script.outstanding.isEmpty)
  }
}
