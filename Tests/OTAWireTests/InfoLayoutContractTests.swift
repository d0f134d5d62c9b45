import Testing

@testable import OTAWire

/// docs/PROTOCOL.md's Info table row by row: every field at its offset, with a value no other field
/// has, and every code a field's table gives.
@Suite struct InfoLayoutContractTests {
  static func le32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
  static func version(_ major: UInt8, _ minor: UInt8, _ revision: UInt16, _ build: UInt32) -> Version {
    Version(major: major, minor: minor, revision: revision, build: build)
  }

  static let info: InfoRecord = {
    var info = InfoRecord(
      state: .validated, runningSlot: .b, flags: [.runningOnTrial, .pairingRequired, .bootStateRebuilt],
      slotVersions: SlotPair(a: version(1, 2, 0x0304, 0x0506_0708), b: version(9, 10, 0x0B0C, 0x0D0E_0F10)),
      inactiveSlotContent: .pendingTrial, slotCapacity: 0x1112_1314, windowCapacity: 0x1516_1718,
      maxChunkPayload: 0x191A,
      transfer: TransferStatus(
        state: .validated, size: 0x2122_2324, crc32: 0x2526_2728, committedOffset: 0x292A_2B2C),
      transferVersion: version(0x31, 0x32, 0x3334, 0x3536_3738),
      lastOutcome: UpdateOutcome(
        result: .succeeded, from: version(0x41, 0x42, 0x4344, 0x4546_4748),
        to: version(0x51, 0x52, 0x5354, 0x5556_5758), reason: .didNotStart, attemptsUsed: 0x69),
      chunksDropped: 0x7071_7273, features: [.missingRanges, .operations, .blockHashRequests],
      l2capPSM: 0x7879)
    info.maxOperationLength = 0x8081_8283
    info.runningImageSize = 0x8485_8687
    info.runningImageCRC = 0x8889_8A8B
    info.receiveSpan = 0x9293_9495
    info.maxFrameLength = 0x9697_9899
    info.keptActivation = KeptActivation(
      kind: .permanent, hold: .beforeWindow, notBefore: 0xA2A3_A4A5, notAfter: 0xA6A7_A8A9,
      askAgainAfter: 0xAAAB_ACAD)
    return info
  }()

  /// The field's bytes at `offset`, as the table gives it: `count` bytes.
  static func field(_ offset: Int, _ count: Int) -> [UInt8] { Array(info.encoded[offset..<offset + count]) }

  /// MCUboot's image_version as 8 bytes: major u8, minor u8, revision u16, build u32.
  static func versionBytes(_ version: Version) -> [UInt8] {
    [version.major, version.minor, UInt8(version.revision & 0xFF), UInt8(version.revision >> 8)]
      + le32(version.build)
  }

  @Test func everyFieldSitsAtItsOffset() throws {
    // [P-INFO-4] [P-INFO-5] [P-INFO-6] [P-INFO-8] [P-INFO-9] [P-INFO-10] [P-INFO-11] [P-INFO-12]
    // [P-INFO-13] [P-INFO-14] [P-INFO-15] [P-INFO-16] [P-INFO-17] [P-INFO-18] [P-INFO-19] [P-INFO-20]
    // [P-INFO-21] [P-INFO-22] [P-INFO-23] [P-INFO-24] [P-INFO-25] [P-INFO-26] [P-INFO-27] [P-INFO-28]
    // [P-INFO-29]
    let info = Self.info
    #expect(Self.field(0, 1) == [1])
    #expect(Self.field(1, 1) == [DeviceState.validated.rawValue])
    #expect(Self.field(2, 1) == [1])
    #expect(Self.field(4, 8) == Self.versionBytes(info.slotVersions.a))
    #expect(Self.field(12, 8) == Self.versionBytes(info.slotVersions.b))
    #expect(Self.field(20, 1) == [3])
    #expect(Self.field(21, 4) == Self.le32(0x1112_1314))
    #expect(Self.field(25, 4) == Self.le32(0x1516_1718))
    #expect(Self.field(29, 2) == [0x1A, 0x19])
    #expect(Self.field(31, 4) == Self.le32(0x2122_2324))
    #expect(Self.field(35, 4) == Self.le32(0x2526_2728))
    #expect(Self.field(39, 4) == Self.le32(0x292A_2B2C))
    #expect(Self.field(43, 1) == [1])
    #expect(Self.field(44, 8) == Self.versionBytes(info.lastOutcome.from))
    #expect(Self.field(52, 8) == Self.versionBytes(info.lastOutcome.to))
    #expect(Self.field(60, 1) == [3])
    #expect(Self.field(61, 8) == Self.versionBytes(info.transferVersion))
    #expect(Self.field(69, 1) == [0x69])
    #expect(Self.field(70, 4) == Self.le32(0x7071_7273))
    #expect(Self.field(74, 4) == [0x07, 0, 0, 0])
    #expect(Self.field(78, 2) == [0x79, 0x78])
    #expect(Self.field(80, 4) == Self.le32(0x8081_8283))
    #expect(Self.field(84, 4) == Self.le32(0x8485_8687))
    #expect(Self.field(88, 4) == Self.le32(0x8889_8A8B))
    #expect(Self.field(92, 4) == Self.le32(0x9293_9495))
    // [P-INFO-30]
    #expect(Self.field(96, 4) == Self.le32(0x9697_9899))
    // [P-INFO-31]
    #expect(Self.field(100, 1) == [2])
    #expect(Self.field(101, 1) == [4])
    #expect(Self.field(102, 4) == Self.le32(0xA2A3_A4A5))
    #expect(Self.field(106, 4) == Self.le32(0xA6A7_A8A9))
    #expect(Self.field(110, 4) == Self.le32(0xAAAB_ACAD))
    #expect(info.encoded.count == 114)
    #expect(try InfoRecord(bytes: info.encoded) == info)
  }

  @Test func everyCodeIsTheTables() {
    // [P-INFO-7] [P-INFO-10] [P-INFO-17] [P-INFO-20] [P-RESP-9] [SEC-PAIR-1]
    // Flags: bit 0 on trial, bit 1 signatures required, bit 2 pairing required, bit 3 rebuilt,
    // bit 4 decrypts images.
    #expect(Self.field(3, 1) == [0b1101])
    let flags: [InfoRecord.Flags] = [
      .runningOnTrial, .signaturesRequired, .pairingRequired, .bootStateRebuilt, .decryptsImages,
      .consentRequired,
    ]
    #expect(flags.map(\.rawValue) == [1, 2, 4, 8, 16, 32])
    // [P-INFO-31]
    #expect(KeptActivation.Kind.permanent.rawValue == 2 && KeptActivation.Kind.trial.rawValue == 1)
    #expect(
      ActivationHoldReason.allCases.map { "\($0.rawValue) \($0)" } == [
        "0 nothing", "1 an update lock", "2 awaiting consent", "3 postponed", "4 before its window",
      ])
    #expect(DeviceState.allCases.map(\.rawValue) == [0, 1, 2, 3, 4])
    #expect(
      DeviceState.allCases.map(\.description) == [
        "idle", "preparing", "receiving", "validated", "activating",
      ])
    #expect(
      SlotContent.allCases.map { "\($0.rawValue) \($0)" }
        == ["0 unknown", "1 receiving", "2 validated", "3 pending trial", "4 good", "5 bad"])
    #expect([UpdateOutcome.Result.none, .succeeded, .rolledBack].map(\.rawValue) == [0, 1, 2])
    #expect(
      [UpdateOutcome.Reason.none, .healthCheckFailed, .healthCheckTimedOut, .didNotStart, .markedBad]
        .map(\.rawValue) == [0, 1, 2, 3, 4])
  }
}
