import Crypto
import OTABoot
import OTAChecksum
import OTANordicDFU
import OTAReceiverHost
import OTAStorage
import OTAWire
import Testing

/// Nordic's Secure DFU on otad's slots (docs/NORDIC-DFU.md), step by step as nrfutil's
/// `dfu_transport_ble.py` drives it, on init packets nrfutil made: the bytes of each notification as
/// SDK 15's bootloader sends them, the image in the inactive slot, the trial after the last EXECUTE,
/// a resume after a drop, and every refusal with Nordic's extended error.
@Suite struct SecureDFUTests {
  static let firmware = (0..<12_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
  static let trust = try! SecureDFUDevice.Trust(pem: SecureDFUFixtures.trustedKey, hardwareVersion: 52)

  typealias Session = NordicDFUDriver<SecureDFUDevice>

  func session(_ fixture: DeviceFixture = DeviceFixture(slotCapacity: 64 * 1024)) throws -> Session {
    Session(device: SecureDFUDevice(trust: Self.trust), host: try fixture.makeHost())
  }

  /// The init packet and two objects executed, one packet of the last object written: 8436 bytes
  /// arrived, 8192 committed.
  func sessionCutInItsLastObject(_ fixture: DeviceFixture) throws -> Session {
    var session = try self.session(fixture)
    _ = try session.sendInit(SecureDFUFixtures.signed)
    _ = try session.sendFirmware(Array(Self.firmware.prefix(8192)))
    _ = try session.control(Session.create(0x02, 12_000 - 8192))
    try session.packet(Array(Self.firmware[8192..<8192 + 244]))
    return session
  }

  static func u32(_ value: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.appendU32(UInt32(value))
    return bytes
  }

  @Test func nrfutilsFlowEndsOnTheNewImageOnTrial() throws {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var session = try self.session(fixture)
    #expect(try session.control([0x02, 0x00, 0x00]) == [0x60, 0x02, 0x01], "SET PRN 0")
    #expect(try session.control([0x00]) == [0x60, 0x00, 0x01, 0x01], "protocol version 1")
    #expect(
      try session.control([0x06, 0x01]) == [0x60, 0x06, 0x01] + Self.u32(512) + Self.u32(0) + Self.u32(0),
      "SELECT command: 512 bytes at most, nothing yet")
    let initPacket = SecureDFUFixtures.signed
    #expect(try session.control(Session.create(0x01, initPacket.count)) == [0x60, 0x01, 0x01])
    #expect(
      try session.stream(initPacket[...])
        == [0x60, 0x03, 0x01] + Self.u32(initPacket.count) + Self.u32(Int(CRC32.checksum(initPacket))))
    #expect(try session.control([0x04]) == [0x60, 0x04, 0x01], "the init packet is taken")
    #expect(session.notes.last?.hasPrefix("an update of 12000 bytes, version 2.0.0+0, into slot B") == true)
    #expect(
      try session.control([0x06, 0x02]) == [0x60, 0x06, 0x01] + Self.u32(4096) + Self.u32(0) + Self.u32(0))
    // The first object: its checksum is the CRC32 of everything so far.
    _ = try session.control(Session.create(0x02, 4096))
    #expect(
      try session.stream(Self.firmware[0..<4096])
        == [0x60, 0x03, 0x01] + Self.u32(4096) + Self.u32(Int(CRC32.checksum(Self.firmware.prefix(4096)))))
    #expect(try session.control([0x04]) == [0x60, 0x04, 0x01])
    #expect(!session.restarted)
    #expect(try session.sendFirmware(Self.firmware, from: 4096) == [0x60, 0x04, 0x01], "the last EXECUTE")
    #expect(session.restarted, "the last EXECUTE activates: a restart into the trial")
    #expect(
      session.notes.last
        == "the last data object executed: 2.0.0+0 on trial in slot B; its health check decides")
    #expect(Array(fixture.medium.durableSlotBytes(.b).prefix(Self.firmware.count)) == Self.firmware)
    #expect(fixture.runningSlotUntouched)
    let next = try fixture.boot(verdict: .silent)
    #expect(next.running == .b && next.runningOnTrial)
    #expect(next.boot[.b].version == Version(major: 2, minor: 0, revision: 0))
  }

  @Test func aReceiptEveryNPacketsCarriesTheOffsetAndCRC32SoFar() throws {
    var session = try self.session()
    _ = try session.control([0x02, 0x03, 0x00])
    // The init packet's packets count too: 143 bytes in 20-byte packets (ATT MTU 23), a receipt
    // after the 3rd and the 6th.
    session.packetSize = 20
    let initPacket = SecureDFUFixtures.signed
    _ = try session.control([0x06, 0x01])
    _ = try session.control(Session.create(0x01, initPacket.count))
    session.notifications = []
    _ = try session.stream(initPacket[...])
    #expect(
      session.notifications.dropLast()
        == [60, 120].map {
          [0x60, 0x03, 0x01] + Self.u32($0) + Self.u32(Int(CRC32.checksum(initPacket.prefix($0))))
        })
    #expect(try session.control([0x04]) == [0x60, 0x04, 0x01])
    session.packetSize = 244
    session.notifications = []
    _ = try session.control(Session.create(0x02, 4096))
    _ = try session.stream(Self.firmware[0..<4096])
    // 17 packets of 244 bytes and one of 148: a receipt after the 3rd, 6th, ... 15th, then CHECKSUM.
    let receipts = session.notifications.dropFirst().dropLast()
    #expect(receipts.count == 5)
    for (index, receipt) in receipts.enumerated() {
      let end = (index + 1) * 3 * 244
      #expect(
        receipt == [0x60, 0x03, 0x01] + Self.u32(end)
          + Self.u32(Int(CRC32.checksum(Self.firmware.prefix(end)))))
    }
  }

  @Test func aCentralThatDropsResumesWhereItLeftOff() throws {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var session = try sessionCutInItsLastObject(fixture)
    session.record(session.device.disconnected())
    #expect(
      session.notes.last
        == "the Secure DFU central left at 8436 of 12000 bytes (8192 committed): a central that comes back resumes there"
    )
    // nrfutil's recovery: SELECT command finds its init packet whole (offset and CRC) and EXECUTEs it
    // again; SELECT data gives the offset and CRC32 of all that arrived, the object it was writing
    // included; nrfutil sends the rest of that object and EXECUTEs it.
    let initPacket = SecureDFUFixtures.signed
    #expect(
      try session.control([0x06, 0x01])
        == [0x60, 0x06, 0x01] + Self.u32(512) + Self.u32(initPacket.count)
        + Self.u32(Int(CRC32.checksum(initPacket))))
    #expect(
      try session.control([0x04]) == [0x60, 0x04, 0x01], "the same init packet again keeps the transfer")
    #expect(
      try session.control([0x06, 0x02])
        == [0x60, 0x06, 0x01] + Self.u32(4096) + Self.u32(8436)
        + Self.u32(Int(CRC32.checksum(Self.firmware.prefix(8436)))))
    #expect(
      try session.stream(Self.firmware[8436..<12_000])
        == [0x60, 0x03, 0x01] + Self.u32(12_000) + Self.u32(Int(CRC32.checksum(Self.firmware))))
    #expect(try session.control([0x04]) == [0x60, 0x04, 0x01], "the last object, whole: the update ends")
    #expect(session.restarted)
    #expect(Array(fixture.medium.durableSlotBytes(.b).prefix(Self.firmware.count)) == Self.firmware)
  }

  /// A restart (or a power cut) mid-firmware: the next otad takes the transfer up again where the
  /// last executed object ends, and nrfutil's recovery finishes it.
  @Test func afterARestartTheTransferResumesWhereTheLastExecutedObjectEnds() throws {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    _ = try sessionCutInItsLastObject(fixture)
    // otad starts again: a new device over the same storage.
    var restarted = Session(device: SecureDFUDevice(trust: Self.trust), host: try fixture.makeHost())
    #expect(
      try restarted.device.resume(host: &restarted.host)
        == "a Secure DFU update of 12000 bytes, version 2.0.0+0, resumes at 8192")
    let initPacket = SecureDFUFixtures.signed
    #expect(
      try restarted.control([0x06, 0x01])
        == [0x60, 0x06, 0x01] + Self.u32(512) + Self.u32(initPacket.count)
        + Self.u32(Int(CRC32.checksum(initPacket))))
    #expect(try restarted.control([0x04]) == [0x60, 0x04, 0x01])
    #expect(
      try restarted.control([0x06, 0x02])
        == [0x60, 0x06, 0x01] + Self.u32(4096) + Self.u32(8192)
        + Self.u32(Int(CRC32.checksum(Self.firmware.prefix(8192)))))
    #expect(try restarted.sendFirmware(Self.firmware, from: 8192) == [0x60, 0x04, 0x01])
    #expect(restarted.restarted)
    #expect(Array(fixture.medium.durableSlotBytes(.b).prefix(Self.firmware.count)) == Self.firmware)
    #expect(
      try fixture.makeHost().storage.records.load(SecureDFUDevice.recordName) == nil, "the record is gone")
  }

  /// The kept init packet is trusted no further than a new one: another key, a damaged record, or a
  /// journal that is no longer its transfer's, and nothing resumes (the record is dropped).
  @Test func aKeptInitPacketThatNoLongerHoldsResumesNothing() throws {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var session = try self.session(fixture)
    _ = try session.sendInit(SecureDFUFixtures.signed)
    _ = try session.sendFirmware(Array(Self.firmware.prefix(4096)))
    let other = SecureDFUDevice.Trust(key: P256.Signing.PrivateKey().publicKey, hardwareVersion: 52)
    var host = try fixture.makeHost()
    var device = SecureDFUDevice(trust: other)
    #expect(
      try device.resume(host: &host)?.hasPrefix("the kept Secure DFU init packet no longer holds") == true)
    #expect(!device.active)
    #expect(try host.storage.records.load(SecureDFUDevice.recordName) == nil)
    #expect(try device.resume(host: &host) == nil, "nothing kept: nothing said")
    try host.storage.records.replace(SecureDFUDevice.recordName, with: [0x12, 0x34, 0x56])
    #expect(
      try device.resume(host: &host)?.hasPrefix("the kept Secure DFU init packet no longer holds") == true)
    // The right key, but the journal is another transfer's (an OTA PREPARE of another size came since).
    var again = try self.session(fixture)
    _ = try again.sendInit(SecureDFUFixtures.signed)
    let journal = try #require(again.host.transaction.current(of: .secureDFU)?.journal)
    again.host.advance(to: .seconds(31))
    _ = try again.host.begin(.ota, size: 20_000, crc32: 1, version: journal.version)
    var fresh = SecureDFUDevice(trust: Self.trust)
    var afterPrepare = try fixture.makeHost()
    #expect(
      try fresh.resume(host: &afterPrepare)
        == "the kept Secure DFU init packet is not the transfer's under way: nothing to resume")
  }

  @Test func eachInitPacketNrfutilMadeWronglyIsRefusedAsNordicsBootloaderRefusesIt() throws {
    // nrf_dfu_validation.c's answers: a bad signature and an unreadable packet are INVALID OBJECT
    // (0x05), the rest extended errors (0x0B and which).
    let unreadable =
      "it is no init packet this device can read, or its signature is not by the trusted key (0x05)"
    let cases: [([UInt8], [UInt8], String)] = [
      (SecureDFUFixtures.otherHardware, [0x0B, 0x06], "its hw_version is not this device's (0x0B 0x06)"),
      (SecureDFUFixtures.otherKey, [0x05], unreadable),
      (SecureDFUFixtures.unsigned, [0x0B, 0x08], "it is not signed (0x0B 0x08)"),
      (
        SecureDFUFixtures.needsSoftDevice, [0x0B, 0x07],
        "it needs a SoftDevice, and this device has none (sd_req without 0x00 or 0xFFFE) (0x0B 0x07)"
      ),
      ([0x08, 0x01, 0x12], [0x05], unreadable),
    ]
    for (packet, answer, note) in cases {
      let fixture = DeviceFixture(slotCapacity: 64 * 1024)
      var session = try self.session(fixture)
      #expect(try session.sendInit(packet) == [0x60, 0x04] + answer)
      #expect(session.notes.last == "init packet refused: \(note)")
      #expect(
        try session.control(Session.create(0x02, 4096)) == [0x60, 0x01, 0x08],
        "no firmware without an init packet")
      #expect(fixture.runningSlotUntouched)
    }
    var older = try self.session()
    #expect(
      try older.sendInit(SecureDFUFixtures.older) == [0x60, 0x04, 0x0B, 0x05],
      "0.9.0 below the confirmed 1.0.0")
    #expect(
      older.notes.last
        == "init packet refused: its version 0.9.0+0 is older than the confirmed 1.0.0+0 (0x0B 0x05)")
    var small = try self.session(DeviceFixture(slotCapacity: 8 * 1024))
    #expect(try small.sendInit(SecureDFUFixtures.signed) == [0x60, 0x04, 0x04], "12000 bytes, an 8 KiB slot")
  }

  @Test func aFirmwareWhoseSHA256IsNotTheInitPacketsIsRefusedAtTheLastExecute() throws {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var session = try self.session(fixture)
    _ = try session.sendInit(SecureDFUFixtures.signed)
    var other = Self.firmware
    other[5000] ^= 0x01
    #expect(try session.sendFirmware(other) == [0x60, 0x04, 0x0B, 0x0C], "VERIFICATION FAILED")
    #expect(!session.restarted && fixture.runningSlotUntouched)
    #expect(try fixture.boot().running == .a)
    #expect(
      try session.control([0x06, 0x02]) == [0x60, 0x06, 0x01] + Self.u32(4096) + Self.u32(0) + Self.u32(0))
  }

  @Test func stepsOutOfOrderAndUnknownOnesAreRefused() throws {
    var session = try self.session()
    #expect(try session.control([0x42]) == [0x60, 0x42, 0x02], "an unknown opcode")
    #expect(try session.control([0x07]) == [0x60, 0x07, 0x02], "MTU GET is the serial transport's")
    #expect(try session.control([0x06, 0x03]) == [0x60, 0x06, 0x05], "no object type 3")
    #expect(try session.control(Session.create(0x01, 0)) == [0x60, 0x01, 0x03], "an empty init packet")
    #expect(
      try session.control(Session.create(0x02, 4096)) == [0x60, 0x01, 0x08], "data before an init packet")
    #expect(
      try session.control(Session.create(0x01, 600)) == [0x60, 0x01, 0x04], "an init packet over 512 bytes")
    _ = try session.control(Session.create(0x01, SecureDFUFixtures.signed.count))
    try session.packet(Array(SecureDFUFixtures.signed.prefix(40)))
    #expect(try session.control([0x04]) == [0x60, 0x04, 0x08], "EXECUTE of a part of the init packet")
    _ = try session.sendInit(SecureDFUFixtures.signed)
    #expect(
      try session.control(Session.create(0x02, 8192)) == [0x60, 0x01, 0x04], "a data object over 4 KiB")
    #expect(
      try session.control(Session.create(0x02, 1000)) == [0x60, 0x01, 0x03], "not a page, not the last")
    #expect(try session.control(Session.create(0x02, 0)) == [0x60, 0x01, 0x03], "an empty object")
    _ = try session.control(Session.create(0x02, 4096))
    try session.packet(Array(Self.firmware.prefix(100)))
    #expect(try session.control([0x04]) == [0x60, 0x04, 0x08], "EXECUTE of a part of a data object")
    #expect(try session.control([0x0C]) == [0x60, 0x0C, 0x01], "ABORT")
    #expect(!session.device.active)
    // A central that floods packets nobody can place: dropped, and told to the log once.
    session.notes = []
    for _ in 0..<100 { try session.packet([1, 2, 3]) }
    #expect(
      session.notes == [
        "firmware bytes with no data object created: ignored (and any more until the next CREATE)"
      ])
    #expect(session.notifications.last == [0x60, 0x0C, 0x01], "no answer to a packet")
  }

  @Test func aTrialWaitingForItsVerdictRefusesANewInitPacket() throws {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var first = try self.session(fixture)
    _ = try first.sendInit(SecureDFUFixtures.signed)
    _ = try first.sendFirmware(Self.firmware)
    var onTrial = Session(
      device: SecureDFUDevice(trust: Self.trust), host: try fixture.boot(verdict: .silent))
    #expect(try onTrial.control(Session.create(0x01, 20)) == [0x60, 0x01, 0x08])
    #expect(
      onTrial.notes.last == "CREATE refused: the running firmware is on trial and needs its verdict first")
  }

  @Test func everyTruncationOfARealInitPacketIsAnsweredNeverACrash() throws {
    let packet = SecureDFUFixtures.signed
    for length in 1..<packet.count {
      let result = Result { () throws(SecureDFU.Refusal) in
        try SecureInitPacket(bytes: Array(packet.prefix(length)))
      }
      if case .success(let decoded) = result {
        // Cut at a field boundary: it still reads, and its signature no longer holds.
        #expect(throws: SecureDFU.Refusal.self) {
          try decoded.check(key: Self.trust.key, hardwareVersion: 52, slotCapacity: 1 << 20)
        }
      }
    }
    let whole = try SecureInitPacket(bytes: packet)
    #expect(
      whole.firmwareVersion == 0x0200_0000 && whole.hardwareVersion == 52 && whole.applicationSize == 12_000)
    #expect(whole.softDeviceRequirements == [0] && whole.signature?.type == 0)
    #expect(whole.sha256 == Array(SHA256.hash(data: Self.firmware)), "the hash nrfutil wrote little-endian")
  }

  @Test func theKeyMustBeAP256PublicKey() throws {
    let privateKey = P256.Signing.PrivateKey().pemRepresentation
    #expect(throws: SecureDFUDevice.KeyError.self) { try SecureDFUDevice.Trust(pem: privateKey) }
    #expect(throws: SecureDFUDevice.KeyError.self) { try SecureDFUDevice.Trust(pem: "not a key") }
    let ed25519 = Curve25519.Signing.PrivateKey().publicKey.rawRepresentation
    #expect(throws: SecureDFUDevice.KeyError.self) {
      try SecureDFUDevice.Trust(pem: "-----BEGIN PUBLIC KEY-----\n\(ed25519)\n-----END PUBLIC KEY-----")
    }
  }
}

/// nrfutil's steps (`dfu_transport_ble.py`), on the device directly.
extension NordicDFUDriver where Device == SecureDFUDevice {
  /// CREATE of a type and size.
  static func create(_ type: UInt8, _ size: Int) -> [UInt8] {
    var bytes: [UInt8] = [0x01, type]
    bytes.appendU32(UInt32(size))
    return bytes
  }

  /// nrfutil's `__stream_data`: the object's bytes in packets, then CALCULATE CHECKSUM.
  mutating func stream(_ bytes: ArraySlice<UInt8>) throws -> [UInt8]? {
    var start = bytes.startIndex
    while start < bytes.endIndex {
      try packet(Array(bytes[start..<min(start + packetSize, bytes.endIndex)]))
      start += packetSize
    }
    return try control([0x03])
  }

  /// nrfutil's `send_init_packet`: SELECT, CREATE, the bytes, CHECKSUM, EXECUTE; the EXECUTE's answer.
  mutating func sendInit(_ initPacket: [UInt8]) throws -> [UInt8]? {
    _ = try control([0x06, 0x01])
    _ = try control(Self.create(0x01, initPacket.count))
    _ = try stream(initPacket[...])
    return try control([0x04])
  }

  /// nrfutil's `send_firmware` from `offset` (an object boundary): per 4 KiB object, CREATE, the
  /// bytes, CHECKSUM, EXECUTE; the last EXECUTE's answer.
  mutating func sendFirmware(_ firmware: [UInt8], from offset: Int = 0) throws -> [UInt8]? {
    var answer: [UInt8]?
    for start in stride(from: offset, to: firmware.count, by: 4096) {
      _ = try control(Self.create(0x02, min(4096, firmware.count - start)))
      _ = try stream(firmware[start..<min(start + 4096, firmware.count)])
      answer = try control([0x04])
    }
    return answer
  }
}
