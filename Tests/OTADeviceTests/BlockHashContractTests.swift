import OTAStorageTesting
import OTATrust
import OTAWire
import Testing

/// docs/PROTOCOL.md's BLOCK HASHES (opcode 0x09, feature bit 2) as a contract, in the bytes on the
/// air, against the same device as `ProtocolContractTests` (MTU 247 unless said): slot A runs a
/// 3000-byte image the boot state records.
@Suite struct BlockHashContractTests {
  typealias Contract = ProtocolContractTests

  static func le64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

  static func request(_ blockSize: UInt32, _ first: UInt32, _ maxCount: UInt8) -> [UInt8] {
    [0x09] + Contract.le32(blockSize) + Contract.le32(first) + [maxCount]
  }

  /// The answer the contract says for blocks `first ..< first + count` of `image`.
  static func page(_ image: [UInt8], blockSize: Int, first: Int, count: Int) -> [UInt8] {
    let total = (image.count + blockSize - 1) / blockSize
    var bytes: [UInt8] = [0x60, 0x09, 0x00] + Contract.le32(UInt32(first)) + Contract.le32(UInt32(total))
    for block in first..<first + count {
      let start = block * blockSize
      bytes += le64(BlockDigest.truncatedSHA256(image[start..<min(start + blockSize, image.count)]))
    }
    return bytes
  }

  static func bench(mtu: ATTMTU = 247) throws -> ProtocolBench {
    try ProtocolBench(recordRunningImage: true, mtu: mtu)
  }

  @Test func infoAnnouncesBitTwoAtOffset74() throws {
    // [P-INFO-24]
    let bench = try Self.bench()
    let bytes = bench.host.info(mtu: 247).encoded
    // Bit 0 missing-range reports, bit 1 data operations, bit 2 BLOCK HASHES, bit 3 packed operations,
    // bit 4 zstd frames.
    #expect(Array(bytes[74..<78]) == [0x3F, 0x00, 0x00, 0x00])
  }

  /// "the first 8 bytes of the SHA-256 of each block ...; the last block may be short": 3000 bytes
  /// in 512-byte blocks are 6, the last 440 bytes.
  @Test func theHashesAreSHA256PrefixesOfTheRunningSlotsBlocks() throws {
    // [P-RESP-6] [P-BH-2] [P-BH-9]
    var bench = try Self.bench()
    let image = bench.fixture.runningImage
    #expect(image.count == 3000)
    let answer = try bench.controlBytes(Self.request(512, 0, 10))
    #expect(answer == [Self.page(image, blockSize: 512, first: 0, count: 6)])
    // The last block alone: 440 bytes hashed, not 512.
    let last = try bench.controlBytes(Self.request(512, 5, 1))
    #expect(
      last == [
        [0x60, 0x09, 0x00, 5, 0, 0, 0, 6, 0, 0, 0]
          + Self.le64(BlockDigest.truncatedSHA256(image[2560..<3000]))
      ])
    // Another block size, another cut: 1024-byte blocks, 3 of them.
    #expect(
      try bench.controlBytes(Self.request(1024, 0, 62)) == [
        Self.page(image, blockSize: 1024, first: 0, count: 3)
      ])
  }

  @Test func countIsCappedByMaxCountAndByTheImagesEnd() throws {
    // [P-BH-3]
    var bench = try Self.bench()
    let image = bench.fixture.runningImage
    #expect(
      try bench.controlBytes(Self.request(512, 1, 2)) == [
        Self.page(image, blockSize: 512, first: 1, count: 2)
      ])
    #expect(
      try bench.controlBytes(Self.request(512, 4, 255)) == [
        Self.page(image, blockSize: 512, first: 4, count: 2)
      ])
  }

  /// "what fits in one notification at the smallest ATT MTU this connection used": at MTU 23,
  /// 20 − 11 = 9 bytes, one hash.
  @Test func countIsCappedByTheSmallestMTU() throws {
    // [P-SESS-4] [P-BH-3] [P-INT-2] [SEC-CHECK-7]
    var small = try Self.bench(mtu: 23)
    let image = small.fixture.runningImage
    let one = try small.controlBytes(Self.request(512, 0, 29))
    #expect(one == [Self.page(image, blockSize: 512, first: 0, count: 1)])
    #expect(one[0].count <= 20)
    // EATT: a second bearer at MTU 23 caps the answers on every bearer.
    var bench = try Self.bench()
    #expect(try bench.controlBytes(Self.request(512, 0, 29))[0].count == 11 + 6 * 8)
    try bench.bearer(mtu: 23)
    #expect(
      try bench.controlBytes(Self.request(512, 2, 29)) == [
        Self.page(image, blockSize: 512, first: 2, count: 1)
      ])
  }

  /// "what keeps the slot bytes read for one answer ≤ 4 MiB (at least 1 block)".
  @Test func oneAnswerReadsAtMostFourMiB() throws {
    // [P-BH-3] [P-CEN-11] [SEC-CHECK-7]
    let image = DeviceFixture.image(size: 5 * 1024 * 1024 + 1000, seed: 9)
    var bench = try ProtocolBench(
      slotCapacity: 6 * 1024 * 1024, recordRunningImage: true, runningImage: image)
    let mib: UInt32 = 1024 * 1024
    // 1 MiB blocks: 6 in all, 4 per answer.
    #expect(
      try bench.controlBytes(Self.request(mib, 0, 62)) == [
        Self.page(image, blockSize: Int(mib), first: 0, count: 4)
      ])
    #expect(bench.host.engine.statistics.blockHashBytesRead == 4 * UInt64(mib))
    #expect(
      try bench.controlBytes(Self.request(mib, 4, 62)) == [
        Self.page(image, blockSize: Int(mib), first: 4, count: 2)
      ])
    // 4 MiB blocks: one per answer, the second one short.
    #expect(
      try bench.controlBytes(Self.request(4 * mib, 0, 62)) == [
        Self.page(image, blockSize: Int(4 * mib), first: 0, count: 1)
      ])
    #expect(
      try bench.controlBytes(Self.request(4 * mib, 1, 62)) == [
        Self.page(image, blockSize: Int(4 * mib), first: 1, count: 1)
      ])
    // 512 KiB blocks: 8 per answer.
    let answer = try bench.controlBytes(Self.request(mib / 2, 0, 62))
    #expect(answer == [Self.page(image, blockSize: Int(mib / 2), first: 0, count: 8)])
  }

  @Test func aRequestOfAnyOtherLengthIsInvalidLength() throws {
    // [P-BH-1] [SEC-CHECK-7]
    var bench = try Self.bench()
    let whole = Self.request(512, 0, 1)
    for length in 1..<whole.count {
      #expect(try bench.controlBytes(Array(whole.prefix(length))) == [[0x60, 0x09, 0x02]], "\(length) bytes")
    }
    #expect(try bench.controlBytes(whole + [0]) == [[0x60, 0x09, 0x02]])
  }

  @Test func absurdFieldsAreInvalidParameter() throws {
    // [P-BH-4] [SEC-CHECK-7]
    var bench = try Self.bench()
    // Not a power of two, below 512, above 4 MiB.
    for size: UInt32 in [0, 1, 256, 511, 513, 3000, 8 << 20, 1 << 31, .max] {
      #expect(try bench.controlBytes(Self.request(size, 0, 1)) == [[0x60, 0x09, 0x04]], "block size \(size)")
    }
    // Max count 0.
    #expect(try bench.controlBytes(Self.request(512, 0, 0)) == [[0x60, 0x09, 0x04]])
    // A first block at or past the total (6 blocks of 512).
    for first: UInt32 in [6, 7, 1 << 23, .max] {
      #expect(try bench.controlBytes(Self.request(512, first, 1)) == [[0x60, 0x09, 0x04]], "first \(first)")
    }
    #expect(bench.host.engine.statistics.blockHashBytesRead == 0)
  }

  /// "With no running image known (Info offset 84 is 0): the blocks of the whole running slot,
  /// where the device requires pairing; none otherwise": a slot written by hand (3000 bytes, in a
  /// 64 KiB slot) is hashed to its end over an authenticated link, and is an empty list without.
  @Test func withNoRunningImageKnownTheWholeSlotIsHashedOnlyOverAnAuthenticatedLink() throws {
    // [P-BH-5] [SEC-CHECK-7]
    var unpaired = try ProtocolBench()
    #expect(unpaired.host.info().runningImageSize == 0)
    // Total 0: an empty list, as for a device with no running slot to read.
    #expect(
      try unpaired.controlBytes(Self.request(4096, 3, 29)) == [[0x60, 0x09, 0x00, 3, 0, 0, 0, 0, 0, 0, 0]])
    #expect(unpaired.host.engine.statistics.blockHashBytesRead == 0)
    var bench = try ProtocolBench(pairingRequired: true)
    #expect(bench.host.info().runningImageSize == 0)
    let slot = bench.fixture.medium.slotBytes(.a)
    #expect(slot.count == 64 * 1024)
    // 16 blocks of 4 KiB: blocks 3 to 15 in one answer (13 left, 29 fit).
    #expect(
      try bench.controlBytes(Self.request(4096, 3, 29)) == [
        Self.page(slot, blockSize: 4096, first: 3, count: 13)
      ])
    // The block size is checked all the same.
    #expect(try bench.controlBytes(Self.request(4095, 0, 29)) == [[0x60, 0x09, 0x04]])
    // A first block past the slot's end is refused as past an image's.
    #expect(try bench.controlBytes(Self.request(4096, 16, 29)) == [[0x60, 0x09, 0x04]])
    // Another block size, another cut: 2 blocks of 32 KiB.
    #expect(
      try bench.controlBytes(Self.request(32768, 0, 29)) == [
        Self.page(slot, blockSize: 32768, first: 0, count: 2)
      ])
    #expect(bench.fixture.runningSlotUntouched)
  }

  @Test func anUnreadableRunningSlotIsAStorageError() throws {
    // [P-RESP-8] [P-BH-6] [P-CEN-11] [SEC-CHECK-7]
    var bench = try Self.bench()
    bench.fixture.medium.inject(.ioError, atOperation: 0, of: [.slotRead])
    #expect(try bench.controlBytes(Self.request(512, 0, 6)) == [[0x60, 0x09, 0x0B]])
    #expect(!bench.host.storageFailures.isEmpty, "logged as a storage failure")
    // The next request reads again.
    #expect(
      try bench.controlBytes(Self.request(512, 0, 6)) == [
        Self.page(bench.fixture.runningImage, blockSize: 512, first: 0, count: 6)
      ])
  }

  /// "A device without bit 2 answers 0x01 unknown opcode (as otad from before)", whatever the length.
  @Test func aDeviceWithoutBitTwoAnswersUnknownOpcode() throws {
    // [P-REQ-10]
    var bench = try ProtocolBench(recordRunningImage: true, features: [.missingRanges, .operations])
    #expect(Array(bench.host.info().encoded[74..<78]) == [0x03, 0x00, 0x00, 0x00])
    #expect(try bench.controlBytes(Self.request(512, 0, 6)) == [[0x60, 0x09, 0x01]])
    #expect(try bench.controlBytes([0x09]) == [[0x60, 0x09, 0x01]])
    #expect(try bench.controlBytes([0x09, 1, 2]) == [[0x60, 0x09, 0x01]])
  }

  /// FEATURES ignores bit 2 (nothing to turn on) and never lists it.
  @Test func featuresNeverListsBitTwo() throws {
    // [P-BH-9] [P-INFO-24]
    var bench = try Self.bench()
    #expect(try bench.controlBytes([0x08, 0x04, 0, 0, 0]) == [[0x60, 0x08, 0x00, 0, 0, 0, 0]])
    #expect(try bench.controlBytes([0x08, 0x07, 0, 0, 0]) == [[0x60, 0x08, 0x00, 0x03, 0, 0, 0]])
  }

  /// "It works in any state": mid-transfer, with a WINDOW waiting for its chunks, the answer comes
  /// and nothing of the transfer moves; the slot being written is never read or written by it.
  @Test func midTransferItAnswersAndChangesNothing() throws {
    // [P-REQ-10] [P-BH-7] [SEC-CHECK-7]
    var bench = try Self.bench()
    let running = bench.fixture.runningImage
    _ = try bench.controlBytes(Contract.prepare(size: 10_000, crc32: Contract.crc(0..<10_000)))
    _ = try Contract.send(&bench, 0..<1000)
    #expect(try bench.controlBytes(Contract.window(0, 2000, Contract.crc(0..<2000))).isEmpty)
    let status = bench.host.engine.transferStatus
    let inactive = bench.fixture.medium.slotBytes(.b)
    let reads = bench.fixture.medium.operationCount
    #expect(
      try bench.controlBytes(Self.request(512, 0, 29)) == [
        Self.page(running, blockSize: 512, first: 0, count: 6)
      ])
    #expect(bench.host.engine.transferStatus == status)
    #expect(bench.fixture.medium.slotBytes(.b) == inactive)
    #expect(bench.fixture.medium.operationCount == reads + 6, "six reads of the running slot, nothing else")
    // The WINDOW waiting before it completes as if nothing happened.
    #expect(try Contract.send(&bench, 1000..<2000) == [Contract.windowAnswer(0x00, 2000)])
    // Validated too.
    _ = try Contract.send(&bench, 2000..<4096)
    _ = try bench.controlBytes(Contract.window(2000, 2096, Contract.crc(2000..<4096)))
    #expect(
      try bench.controlBytes(Self.request(1024, 2, 1)) == [
        Self.page(running, blockSize: 1024, first: 2, count: 1)
      ])
  }

  /// Hostile: a flood of requests, valid and absurd mixed, each answered at once and in order,
  /// never more than 4 MiB read per answer, the device's state untouched.
  @Test func aFloodIsAnsweredInOrder() throws {
    // [P-REQ-13] [P-BH-8] [P-TIME-1] [SEC-CHECK-7]
    var bench = try Self.bench()
    let running = bench.fixture.runningImage
    var expected: [[UInt8]] = []
    var sent: [[UInt8]] = []
    for index in 0..<200 {
      switch index % 4 {
      case 0:
        sent.append(Self.request(512, UInt32(index / 4 % 6), 1))
        expected.append(Self.page(running, blockSize: 512, first: index / 4 % 6, count: 1))
      case 1:
        sent.append(Self.request(513, 0, 1))
        expected.append([0x60, 0x09, 0x04])
      case 2:
        sent.append(Self.request(4 << 20, 0, 255))
        expected.append(Self.page(running, blockSize: 4 << 20, first: 0, count: 1))
      default:
        sent.append([0x09, 0xFF])
        expected.append([0x60, 0x09, 0x02])
      }
    }
    var answers: [[UInt8]] = []
    for request in sent { answers += try bench.controlBytes(request) }
    #expect(answers == expected)
    let statistics = bench.host.engine.statistics
    #expect(statistics.blockHashAnswers == 100)
    // 512-byte blocks 0 to 5 in turn (the sixth 440 bytes), and the whole 3000-byte image as one
    // 4 MiB block.
    let small = (0..<50).map { $0 % 6 == 5 ? 440 : 512 }.reduce(0, +)
    #expect(statistics.blockHashBytesRead == UInt64(small + 50 * 3000))
    #expect(bench.host.engine.transferStatus == .idle)
  }
}
