import OTABoot
import OTANordicDFU
import OTAReceiverHost
import OTAStorage
import OTAWire
import Testing

/// Nordic's Legacy DFU on otad's slots (docs/NORDIC-DFU.md), step by step as nrf-ota and Nordic's
/// DFU libraries drive it: the bytes of each notification as SDK 11's bootloader sends them, the
/// image in the inactive slot, the trial after ACTIVATE AND RESET, and every wrong step answered.
@Suite struct LegacyDFUTests {
  static let firmware = (0..<12_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

  /// adafruit-nrfutil's init packet (DFU 0.5): device type, revision, application version, the
  /// SoftDevices (0xFFFE: any), the firmware's CRC16.
  static func initPacket(
    type: UInt16 = 0x52, revision: UInt16 = 0xFFFF, version: UInt32 = 0x0200_0000, crc: UInt16? = nil
  ) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.appendU16(type)
    bytes.appendU16(revision)
    bytes.appendU32(version)
    bytes.appendU16(1)
    bytes.appendU16(0xFFFE)
    bytes.appendU16(crc ?? CRC16.checksum(firmware))
    return bytes
  }

  static func sizes(_ application: UInt32, softDevice: UInt32 = 0) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.appendU32(softDevice)
    bytes.appendU32(0)
    bytes.appendU32(application)
    return bytes
  }

  typealias Session = NordicDFUDriver<LegacyDFUDevice>

  func session(
    _ fixture: DeviceFixture = DeviceFixture(slotCapacity: 64 * 1024),
    identity: LegacyDFUDevice.Identity = .init()
  ) throws -> Session {
    Session(device: LegacyDFUDevice(identity: identity), host: try fixture.makeHost())
  }

  @Test func nrfOTAsFlowEndsOnTheNewImageOnTrial() throws {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var session = try self.session(fixture)
    try session.send(Self.firmware, initPacket: Self.initPacket())
    // START (success), INIT (success), a receipt every 10 packets of 20 bytes, then the transfer's end.
    #expect(session.notifications.first == [0x10, 0x01, 0x01])
    #expect(session.notifications.dropFirst().first == [0x10, 0x02, 0x01])
    let receipts = session.notifications.filter { $0.first == 0x11 }
    #expect(receipts.count == 59, "600 packets, a receipt after every 10 but the last")
    #expect(receipts.first == [0x11, 200, 0, 0, 0])
    #expect(session.notifications.last == [0x10, 0x03, 0x01])
    try session.control([0x04])
    #expect(session.notifications.last == [0x10, 0x04, 0x01])
    #expect(!session.restarted)
    try session.control([0x05])
    #expect(session.restarted, "ACTIVATE AND RESET restarts into the trial")
    #expect(session.notes.last == "ACTIVATE AND RESET: 2.0.0+0 on trial in slot B; its health check decides")
    #expect(Array(fixture.medium.durableSlotBytes(.b).prefix(Self.firmware.count)) == Self.firmware)
    #expect(fixture.runningSlotUntouched)
    let next = try fixture.boot(verdict: .silent)
    #expect(next.running == .b && next.runningOnTrial)
    #expect(next.boot[.b].version == Version(major: 2, minor: 0, revision: 0))
  }

  @Test func aFirmwareWhoseCRC16IsNotTheInitPacketsFailsValidate() throws {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var session = try self.session(fixture)
    try session.send(Self.firmware, initPacket: Self.initPacket(crc: 0x1234))
    try session.control([0x04])
    #expect(session.notifications.last == [0x10, 0x04, 0x05], "CRC error")
    try session.control([0x05])
    #expect(session.notifications.last == [0x10, 0x05, 0x02], "nothing validated to activate")
    #expect(!session.restarted && fixture.runningSlotUntouched)
    #expect(try fixture.boot().running == .a)
  }

  @Test func anInitPacketForAnotherDeviceIsRefused() throws {
    var session = try self.session(identity: .init(deviceType: 0x52, deviceRevision: 3))
    try session.send(Self.firmware, initPacket: Self.initPacket(type: 0x41))
    #expect(session.notifications[1] == [0x10, 0x02, 0x06])
    #expect(session.notes.last == "init packet for device type 0x41, this device is 0x52")
    #expect(!session.notifications.contains { $0.first == 0x11 }, "no firmware taken after it")
    var any = try self.session(identity: .init(deviceType: 0x52, deviceRevision: 3))
    try any.send(Self.firmware, initPacket: Self.initPacket(type: 0xFFFF, revision: 3))
    #expect(any.notifications.last == [0x10, 0x03, 0x01], "0xFFFF takes any device")
  }

  @Test func startDFUForASoftDeviceOrAnImageOverTheSlotIsRefused() throws {
    var session = try self.session()
    try session.control([0x01, 0x01])
    #expect(session.notifications.last == [0x10, 0x01, 0x03], "a SoftDevice image: not supported")
    try session.control([0x01, 0x04])
    try session.packet(Self.sizes(100, softDevice: 5000))
    #expect(session.notifications.last == [0x10, 0x01, 0x03])
    try session.control([0x01, 0x04])
    try session.packet(Self.sizes(70 * 1024))
    #expect(session.notifications.last == [0x10, 0x01, 0x04], "data size exceeds the limit")
  }

  @Test func stepsOutOfOrderAreInvalidState() throws {
    var session = try self.session()
    try session.control([0x03])
    #expect(session.notifications.last == [0x10, 0x03, 0x02])
    try session.control([0x02, 0x01])
    #expect(session.notifications.last == [0x10, 0x02, 0x02])
    try session.control([0x04])
    #expect(session.notifications.last == [0x10, 0x04, 0x02])
    try session.control([0x07])
    #expect(session.notifications.last == [0x10, 0x07, 0x03])
    try session.control([0x42])
    #expect(session.notifications.last == [0x10, 0x42, 0x03])
    try session.packet([1, 2, 3])
    #expect(session.notifications.count == 5, "a packet nobody asked for is ignored")
  }

  @Test func moreFirmwareThanAnnouncedIsRefused() throws {
    var session = try self.session()
    try session.send(Self.firmware, initPacket: Self.initPacket())
    try session.packet([1, 2, 3])
    #expect(
      session.notifications.last == [0x10, 0x03, 0x01], "the image was complete: the extra packet is ignored")
    var short = try self.session()
    try short.control([0x01, 0x04])
    try short.packet(Self.sizes(10))
    try short.control([0x02, 0x00])
    try short.packet(Self.initPacket(crc: CRC16.checksum(Array(Self.firmware.prefix(10)))))
    try short.control([0x02, 0x01])
    try short.control([0x03])
    try short.packet(Array(Self.firmware.prefix(20)))
    #expect(short.notifications.last == [0x10, 0x03, 0x04], "20 bytes for a 10-byte image")
  }

  @Test func startThenLeavingIsTheButtonlessEntryAndChangesNothing() throws {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var session = try self.session(fixture)
    try session.control([0x01, 0x04])
    session.record(session.device.disconnected())
    #expect(
      session.notes == [
        "a central asked for the bootloader (START DFU, then it left): otad's DFU service is always ready"
      ])
    #expect(!session.device.active && session.notifications.isEmpty)
    #expect(try fixture.boot().running == .a)
  }

  @Test func aSessionCutMidFirmwareEndsAndTheNextBeginsAnew() throws {
    var session = try self.session()
    try session.control([0x01, 0x04])
    try session.packet(Self.sizes(UInt32(Self.firmware.count)))
    try session.control([0x02, 0x00])
    try session.packet(Self.initPacket())
    try session.control([0x02, 0x01])
    try session.control([0x03])
    try session.packet(Array(Self.firmware.prefix(20)))
    session.record(session.device.disconnected())
    #expect(
      session.notes.last
        == "the Legacy DFU central left mid-session: its update ends (Legacy DFU has no resume)")
    session.notifications = []
    try session.send(Self.firmware, initPacket: Self.initPacket())
    #expect(session.notifications.last == [0x10, 0x03, 0x01])
    try session.control([0x04])
    #expect(session.notifications.last == [0x10, 0x04, 0x01])
  }

  @Test func aTrialWaitingForItsVerdictRefusesANewStart() throws {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var first = try self.session(fixture)
    try first.send(Self.firmware, initPacket: Self.initPacket())
    try first.control([0x04])
    try first.control([0x05])
    var onTrial = LegacyDFUTests.Session(device: LegacyDFUDevice(), host: try fixture.boot(verdict: .silent))
    try onTrial.control([0x01, 0x04])
    try onTrial.packet(Self.sizes(100))
    #expect(onTrial.notifications.last == [0x10, 0x01, 0x02])
  }
}

/// The init packet as Nordic's tools write it, and Nordic's CRC16.
@Suite struct LegacyInitPacketTests {
  @Test func adafruitNrfutilsPacketReads() throws {
    // `adafruit-nrfutil dfu genpkg --application app.bin --application-version 0x02000000
    // --dev-type 0x0052`: its app.dat, byte for byte.
    let packet = try LegacyInitPacket(bytes: [
      0x52, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x02, 0x01, 0x00, 0xFE, 0xFF, 0xF4, 0xCB,
    ])
    #expect(
      packet
        == LegacyInitPacket(
          deviceType: 0x52, deviceRevision: 0xFFFF, applicationVersion: 0x0200_0000, softDevices: [0xFFFE],
          check: .crc16(0xCBF4)))
    #expect(packet.version == Version(major: 2, minor: 0, revision: 0))
    #expect(
      try LegacyInitPacket(bytes: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 1, 2]).version == nil
    )
  }

  @Test func extendedPacketsReadAndTheSignedOneIsRefused() throws {
    let head: [UInt8] = [0x52, 0x00, 0xFF, 0xFF, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00]
    #expect(try LegacyInitPacket(bytes: head + [0, 0, 0, 0, 0x34, 0x12]).check == .crc16(0x1234))
    let digest = [UInt8](repeating: 7, count: 32)
    #expect(
      try LegacyInitPacket(bytes: head + [1, 0, 0, 0, 0x10, 0, 0, 0] + digest).check
        == .sha256(length: 16, digest: digest))
    #expect(throws: WireError.self) {
      _ = try LegacyInitPacket(bytes: head + [2, 0, 0, 0, 0x10, 0, 0, 0] + digest)
    }
    #expect(throws: WireError.self) { _ = try LegacyInitPacket(bytes: Array(head.prefix(7))) }
    #expect(throws: WireError.self) { _ = try LegacyInitPacket(bytes: [UInt8](repeating: 0, count: 300)) }
  }

  @Test func crc16IsNordicsCCITTFalse() {
    #expect(CRC16.checksum(Array("123456789".utf8)) == 0x29B1)
    var pieces = CRC16()
    pieces.update(Array("12345".utf8))
    pieces.update(Array("6789".utf8))
    #expect(pieces.value == 0x29B1)
    #expect(CRC16.checksum([]) == 0xFFFF)
  }
}

extension NordicDFUDriver where Device == LegacyDFUDevice {
  /// nrf-ota's order: START DFU and the sizes, the init packet in 20-byte pieces, PRN, RECEIVE,
  /// the firmware in 20-byte packets.
  mutating func send(_ firmware: [UInt8], initPacket: [UInt8], prn: UInt16 = 10) throws {
    try control([0x01, 0x04])
    try packet(LegacyDFUTests.sizes(UInt32(firmware.count)))
    try control([0x02, 0x00])
    for start in stride(from: 0, to: initPacket.count, by: 20) {
      try packet(Array(initPacket[start..<min(start + 20, initPacket.count)]))
    }
    try control([0x02, 0x01])
    try control([0x08, UInt8(prn & 0xFF), UInt8(prn >> 8)])
    try control([0x03])
    for start in stride(from: 0, to: firmware.count, by: 20) {
      try packet(Array(firmware[start..<min(start + 20, firmware.count)]))
    }
  }
}
