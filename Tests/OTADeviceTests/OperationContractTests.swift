import OTAChecksum
import OTAEngine
import OTAStorage
import OTAWire
import Testing

/// docs/PROTOCOL.md's data operations (Info features bit 1) as a contract, in the bytes a central
/// sends: the Info fields, each kind, and every rule whose breach drops the write.
@Suite struct OperationContractTests {
  typealias Contract = ProtocolContractTests
  static func le32(_ value: UInt32) -> [UInt8] { Contract.le32(value) }

  /// A device running slot A's 3000-byte image, known to its boot state, with operations turned on
  /// by FEATURES and a transfer of `target` prepared.
  static func bench(target: [UInt8], recordRunningImage: Bool = true, pairingRequired: Bool = false) throws
    -> ProtocolBench
  {
    var bench = try ProtocolBench(recordRunningImage: recordRunningImage, pairingRequired: pairingRequired)
    // FEATURES 0x03: missing-range reports and operations; the answer says both are on.
    #expect(try bench.controlBytes([0x08] + Self.le32(3)) == [[0x60, 0x08, 0x00] + Self.le32(3)])
    let prepare = Contract.prepare(size: UInt32(target.count), crc32: CRC32.checksum(target))
    #expect(try bench.control(prepare).map(\.status) == [.success])
    return bench
  }

  static func op(_ offset: UInt32, _ kind: UInt8, _ rest: [UInt8]) -> [UInt8] {
    Self.le32(offset) + [kind] + rest
  }

  @Test func infoAnnouncesOperationsAndTheRunningImage() throws {
    // [P-INFO-1] [P-INFO-26] [P-INFO-27] [P-INFO-28]
    let bench = try ProtocolBench(recordRunningImage: true)
    let running = bench.fixture.runningImage
    let info = bench.host.info().encoded
    // "100 bytes"; "features u32 … bit 1 data operations" (and bit 0, and bit 2 BLOCK HASHES).
    #expect(info.count == 114)
    #expect(Array(info[74..<78]) == Self.le32(63))
    // "80 max operation length u32": the default 64 KiB, capped by the window capacity (4096).
    #expect(Array(info[80..<84]) == Self.le32(4096))
    // "84 running image size u32, 88 running image crc32 u32" (the boot state's record).
    #expect(Array(info[84..<88]) == Self.le32(UInt32(running.count)))
    #expect(Array(info[88..<92]) == Self.le32(CRC32.checksum(running)))
  }

  @Test func aDeviceWhoseBootStateKnowsNoRunningImageAnnouncesSizeZero() throws {
    // [P-INFO-27]
    let bench = try ProtocolBench()
    let info = try InfoRecord(bytes: bench.host.info().encoded)
    #expect(info.runningImageSize == 0 && info.maxOperationLength == 4096)
  }

  /// "0 when unknown: then an operation may read the whole running slot, over an authenticated
  /// link": a slot written by hand (3000 bytes at the start of 64 KiB, the rest zero) is a source up
  /// to its last byte, not past, where the device requires pairing.
  @Test func withNoRunningImageKnownOperationsReadTheWholeSlotOverAnAuthenticatedLink() throws {
    // [P-OP-7] [P-INFO-27] [SEC-CHECK-8]
    let slot = try ProtocolBench().fixture.medium.slotBytes(.a)
    #expect(slot.count == 64 * 1024)
    var target = Array(slot[2000..<3000])
    target += Array(slot[(64 * 1024 - 1000)...])
    var bench = try Self.bench(target: target, recordRunningImage: false, pairingRequired: true)
    #expect(bench.host.info().runningImageSize == 0)
    // Past the slot's end: dropped and counted.
    #expect(try bench.data(Self.op(0, 0x02, Self.le32(64 * 1024 - 999) + Self.le32(1000))).isEmpty)
    #expect(bench.host.engine.statistics.chunksDropped == 1)
    #expect(bench.host.engine.coverage.isEmpty)
    // Inside the image's first bytes and at the slot's very end: copied.
    try bench.data(Self.op(0, 0x02, Self.le32(2000) + Self.le32(1000)))
    try bench.data(Self.op(1000, 0x02, Self.le32(64 * 1024 - 1000) + Self.le32(1000)))
    #expect(
      try bench.controlBytes(Contract.window(0, 2000, CRC32.checksum(target)))
        == [Contract.windowAnswer(0x00, 2000)])
    #expect(bench.host.engine.statistics.operationsApplied == 2)
    #expect(bench.fixture.runningSlotUntouched)
  }

  /// No oracle: without pairing, a slot nobody adopted is no source at all. A 1-byte copy and a
  /// 1-byte WINDOW with a guessed CRC would otherwise tell whether the guess of a byte is right.
  @Test func withNoRunningImageKnownAndNoPairingNothingIsCopied() throws {
    // [P-OP-7] [P-INFO-27] [SEC-CHECK-8] [SEC-ATK-32]
    let slot = try ProtocolBench().fixture.medium.slotBytes(.a)
    let secret = slot[1234]
    var bench = try Self.bench(target: [secret], recordRunningImage: false)
    #expect(bench.host.info().runningImageSize == 0)
    for _ in 0..<3 {
      try bench.data(Self.op(0, 0x02, Self.le32(1234) + Self.le32(1)))
    }
    #expect(bench.host.engine.statistics.operationsApplied == 0)
    #expect(bench.host.engine.statistics.operationsRejected == 3)
    #expect(bench.host.engine.coverage.isEmpty)
    // The guess, right or wrong, gets the same answer once the grace is over: missing data.
    for guess in [secret, secret &+ 1] {
      var answers = try bench.controlBytes(Contract.window(0, 1, CRC32.checksum([guess])))
      for _ in 0..<8 { answers += try bench.tick(after: .seconds(5)) }
      let windowAnswers = answers.filter { $0.prefix(2) == [0x60, 0x03] }
      #expect(windowAnswers.map { $0[2] } == [0x07], "\(answers)")
    }
  }

  @Test func eachKindStoresItsTargetBytesAndTheWindowChecksThem() throws {
    // [P-OP-3] [P-OP-4] [P-OP-5] [P-OP-6] [P-OP-10]
    let running = try ProtocolBench(recordRunningImage: true).fixture.runningImage
    var target = DeviceFixture.image(size: 4096, seed: 12)
    target.replaceSubrange(2000..<3000, with: running[500..<1500])
    for index in 3000..<4000 { target[index] = running[index - 3000] &+ (index % 7 == 0 ? 1 : 0) }
    var bench = try Self.bench(target: target)
    // raw: the bytes themselves.
    try bench.data(Self.op(0, 0x00, Array(target[0..<1000])))
    // deflate: length u32, raw deflate of the bytes.
    try bench.data(Self.op(1000, 0x01, Self.le32(1000) + RawDeflate.compress(target[1000..<2000])))
    // copy: source u32, length u32: the running slot's bytes.
    try bench.data(Self.op(2000, 0x02, Self.le32(500) + Self.le32(1000)))
    // patch: source u32, length u32, deflated differences added mod 256.
    let differences = (3000..<4000).map { target[$0] &- running[$0 - 3000] }
    try bench.data(Self.op(3000, 0x03, Self.le32(0) + Self.le32(1000) + RawDeflate.compress(differences)))
    try bench.data(Self.op(4000, 0x00, Array(target[4000..<4096])))
    #expect(
      try bench.controlBytes(Contract.window(0, 4096, CRC32.checksum(target)))
        == [Contract.windowAnswer(0x00, 4096)])
    #expect(bench.host.engine.statistics.operationsApplied == 5)
    #expect(bench.host.engine.statistics.chunksDropped == 0)
  }

  @Test func everyBrokenRuleDropsTheWriteAndCountsIt() throws {
    // [P-DATA-6] [P-OP-7] [P-OP-8] [P-OP-9] [P-DEFL-3] [SEC-CHECK-8] [SEC-ATK-19] [SEC-ATK-55]
    let target = DeviceFixture.image(size: 8192, seed: 13)
    var bench = try Self.bench(target: target)
    let hostile: [(String, [UInt8])] = [
      ("length over the max operation length", Self.op(0, 0x02, Self.le32(0) + Self.le32(4097))),
      ("target past the image's end", Self.op(8100, 0x00, Array(target[4000..<4200]))),
      ("a lying offset that wraps", Self.op(0xFFFF_FFF0, 0x00, Array(target[0..<100]))),
      ("source past the running image", Self.op(0, 0x02, Self.le32(2900) + Self.le32(200))),
      ("source that wraps", Self.op(0, 0x02, Self.le32(0xFFFF_FF00) + Self.le32(0x200))),
      ("deflate inflating to more", Self.op(0, 0x01, Self.le32(100) + RawDeflate.compress(target[0..<101]))),
      ("deflate inflating to fewer", Self.op(0, 0x01, Self.le32(100) + RawDeflate.compress(target[0..<99]))),
      ("not deflate", Self.op(0, 0x01, Self.le32(100) + [0xFF, 0xFF, 0xFF, 0xFF])),
      ("patch with bad differences", Self.op(0, 0x03, Self.le32(0) + Self.le32(100) + [0x07])),
      (
        "a truncated deflate payload",
        Self.op(0, 0x01, Self.le32(1000) + RawDeflate.compress(target[0..<1000]).dropLast(3))
      ),
      ("copy missing its length", Self.op(0, 0x02, Self.le32(0))),
      ("copy with trailing bytes", Self.op(0, 0x02, Self.le32(0) + Self.le32(10) + [0])),
      ("unknown kind", Self.op(0, 0x05, [1, 2, 3])),
      ("length 0", Self.op(0, 0x02, Self.le32(0) + Self.le32(0))),
      ("raw with no payload", Self.op(0, 0x00, [])),
      ("a plain chunk's 4 bytes", Self.le32(0)),
    ]
    for (index, (rule, bytes)) in hostile.enumerated() {
      #expect(try bench.data(bytes).isEmpty, "\(rule): no notification answers a data write")
      #expect(bench.host.engine.statistics.chunksDropped == index + 1, "\(rule): dropped and counted")
      #expect(bench.host.engine.lastRejection != nil, "\(rule)")
    }
    #expect(try InfoRecord(bytes: bench.host.info().encoded).chunksDropped == UInt32(hostile.count))
    // Nothing was stored: the window's first byte is still missing, and the running slot is intact.
    #expect(bench.host.engine.coverage.isEmpty)
    #expect(bench.fixture.runningSlotUntouched)
    // The same range sent properly is taken.
    try bench.data(Self.op(0, 0x00, Array(target[0..<400])))
    #expect(
      try bench.controlBytes(Contract.window(0, 400, CRC32.checksum(target[0..<400])))
        == [Contract.windowAnswer(0x00, 400)])
  }

  @Test func withoutFeaturesBit1AWriteIsAPlainChunk() throws {
    // [P-OP-11]
    var bench = try ProtocolBench(recordRunningImage: true)
    let image = Contract.image
    _ = try bench.control(Contract.prepare(size: 10_000, crc32: Contract.crc(0..<10_000)))
    // An operation's bytes read as a chunk at offset 0 with the kind byte as image data.
    let bytes = Self.op(0, 0x00, Array(image[1..<200]))
    try bench.data(bytes)
    #expect(bench.host.engine.statistics.operationsApplied == 0)
    #expect(bench.host.engine.coverage.contains(0..<200))
  }
}

extension OperationContractTests {
  /// A patch whose differences are bad is dropped before the running slot is read for it, and a
  /// copy into bytes already stored reads nothing: every read is for bytes that are then stored.
  @Test func nothingIsReadForAWriteThatCannotBeStored() throws {
    // [P-OP-9] [P-OP-10] [SEC-CHECK-8]
    let target = DeviceFixture.image(size: 4096, seed: 14)
    var bench = try Self.bench(target: target)
    func reads() -> Int { bench.fixture.medium.operationCount(of: .slotRead) }
    let before = reads()
    try bench.data(Self.op(0, 0x03, Self.le32(0) + Self.le32(1000) + [0x07]))
    #expect(reads() == before, "a bad patch reads nothing")
    try bench.data(Self.op(0, 0x00, Array(target[0..<200])))
    try bench.data(Self.op(0, 0x02, Self.le32(0) + Self.le32(200)))
    #expect(reads() == before, "a copy into stored bytes reads nothing")
    #expect(bench.host.engine.statistics.chunksDuplicate == 1)
    // The control case: a copy into bytes not stored yet reads the running slot once.
    try bench.data(Self.op(200, 0x02, Self.le32(0) + Self.le32(100)))
    #expect(reads() == before + 1)
  }
}

extension OperationContractTests {
  // [P-REP-5]
  /// Missing-range reports work unchanged with operations: a late operation that comes after its
  /// resend committed the WINDOW proves the report spurious, as a late plain chunk does
  /// (`MissingRangeContractTests.aLateCopyAfterItsWindowCommittedStillProvesTheReportSpurious`):
  /// counted as a duplicate, not dropped or rejected (no warning in otad's log), and the reorder
  /// window widens. Once per report; a committed range no report named is still refused.
  @Test func aLateOperationAfterItsWindowCommittedStillProvesTheReportSpurious() throws {
    let image = Contract.image
    var bench = try Self.bench(target: image)
    func send(_ range: Range<Int>) throws -> [[UInt8]] {
      var answers: [[UInt8]] = []
      for start in stride(from: range.lowerBound, to: range.upperBound, by: 100) {
        answers += try bench.data(
          Self.op(UInt32(start), 0x00, Array(image[start..<min(start + 100, range.upperBound)])))
      }
      return answers
    }
    #expect(try bench.controlBytes(Contract.window(0, 1800, Contract.crc(0..<1800))).isEmpty)
    _ = try send(0..<100)
    _ = try send(200..<1700)
    _ = try bench.tick(after: .milliseconds(100))
    #expect(try send(1700..<1800) == [MissingRangeContractTests.report(highest: 1800, [(100, 100)])])
    // The resend completes the WINDOW: committed.
    #expect(try send(100..<200) == [Contract.windowAnswer(0x00, 1800)])
    let statistics = bench.host.engine.statistics
    // Then the original arrives, below the committed offset.
    #expect(try send(100..<200).isEmpty)
    #expect(bench.host.engine.statistics.spuriousReports == 1)
    #expect(bench.host.engine.reorderWindow == .milliseconds(200))
    #expect(bench.host.engine.statistics.chunksDuplicate == statistics.chunksDuplicate + 1)
    #expect(bench.host.engine.statistics.chunksDropped == statistics.chunksDropped)
    #expect(bench.host.engine.statistics.operationsRejected == 0)
    #expect(bench.host.engine.lastRejection == nil)
    // Once per report: a third copy proves nothing more, and is refused as outside the window.
    _ = try send(100..<200)
    #expect(bench.host.engine.statistics.spuriousReports == 1)
    #expect(bench.host.engine.statistics.operationsRejected == 1)
    // A committed range no report named is still refused, as before.
    _ = try send(300..<400)
    #expect(bench.host.engine.statistics.chunksDropped == statistics.chunksDropped + 2)
    #expect(bench.host.engine.statistics.operationsRejected == 2)
    #expect(bench.host.engine.reorderWindow == .milliseconds(200))
  }

  // MARK: Packed operations (features bit 3)

  /// A device with operations and packed operations turned on (FEATURES 0x0B) and `target` prepared.
  static func packedBench(target: [UInt8]) throws -> ProtocolBench {
    var bench = try ProtocolBench(recordRunningImage: true)
    #expect(try bench.controlBytes([0x08] + Self.le32(0x0B)) == [[0x60, 0x08, 0x00] + Self.le32(0x0B)])
    let prepare = Contract.prepare(size: UInt32(target.count), crc32: CRC32.checksum(target))
    #expect(try bench.control(prepare).map(\.status) == [.success])
    return bench
  }

  static func packed(_ operations: [[UInt8]]) -> [UInt8] {
    operations.flatMap { [UInt8($0.count & 0xFF), UInt8($0.count >> 8)] + $0 }
  }

  @Test func aPackedWriteAppliesEachOperationInOrder() throws {
    // [P-PACK-1] [P-PACK-2] [SEC-CHECK-8]
    let running = try ProtocolBench(recordRunningImage: true).fixture.runningImage
    var target = DeviceFixture.image(size: 4096, seed: 21)
    target.replaceSubrange(100..<1100, with: running[0..<1000])
    target.replaceSubrange(1200..<2200, with: running[1000..<2000])
    var bench = try Self.packedBench(target: target)
    // One write: raw 0..<100, copy 100..<1100, raw 1100..<1200, copy 1200..<2200, and a copy
    // whose source lies past the running image (dropped on its own, the others stored).
    try bench.data(
      Self.packed([
        Self.op(0, 0x00, Array(target[0..<100])),
        Self.op(100, 0x02, Self.le32(0) + Self.le32(1000)),
        Self.op(1100, 0x00, Array(target[1100..<1200])),
        Self.op(1200, 0x02, Self.le32(1000) + Self.le32(1000)),
        Self.op(2200, 0x02, Self.le32(2900) + Self.le32(500)),
      ]))
    #expect(bench.host.engine.statistics.operationsApplied == 4)
    #expect(bench.host.engine.statistics.chunksDropped == 1)
    #expect(bench.host.engine.coverage.ranges == [0..<2200])
    try bench.data(
      Self.packed([
        Self.op(2200, 0x01, Self.le32(1000) + RawDeflate.compress(target[2200..<3200])),
        Self.op(3200, 0x00, Array(target[3200..<3400])),
      ]))
    try bench.data(Self.packed([Self.op(3400, 0x00, Array(target[3400..<4096]))]))
    #expect(
      try bench.controlBytes(Contract.window(0, 4096, CRC32.checksum(target)))
        == [Contract.windowAnswer(0x00, 4096)])
  }

  @Test func aPackedWriteWithABrokenFramingIsDroppedWhole() throws {
    // [P-PACK-3] [SEC-CHECK-8]
    let target = DeviceFixture.image(size: 4096, seed: 22)
    var bench = try Self.packedBench(target: target)
    let good = Self.packed([Self.op(0, 0x00, Array(target[0..<50]))])
    try bench.data(good + [7, 0, 1, 2])  // the second length runs past the end
    try bench.data(good + [9])  // one byte left over
    try bench.data([0, 0] + good)  // a length of 0
    #expect(bench.host.engine.statistics.chunksDropped == 3)
    #expect(bench.host.engine.coverage.isEmpty, "nothing of a broken write is stored")
    try bench.data(good)
    #expect(bench.host.engine.coverage.ranges == [0..<50])
  }

  @Test func withoutBitThreeAWriteIsOneOperation() throws {
    // [P-PACK-4]
    let target = DeviceFixture.image(size: 4096, seed: 23)
    var bench = try Self.bench(target: target)
    // A packed write (length 55, then the operation) read as one operation: its first four bytes
    // are the target offset 55, its fifth the kind 0 (raw), the rest 52 bytes to store there.
    try bench.data(Self.packed([Self.op(0, 0x00, Array(target[0..<50]))]))
    #expect(bench.host.engine.coverage.ranges == [55..<107])
    #expect(bench.host.engine.statistics.operationsApplied == 1)
  }
}
