import OTAChecksum
import Testing

@testable import OTADeltaPlan
@testable import OTASender
@testable import OTAWire

/// The central's paged read of the running image's block hashes (BLOCK HASHES, features bit 2):
/// scripted device answers, time passed in by hand. CRC32 stands in for the truncated SHA-256
/// (this target links no hash): the engine only compares the values.
@Suite struct SenderBlockHashPagingTests {
  static let digest: BlockDigester = { UInt64(CRC32.checksum($0)) }
  static let version = Version(major: 2, minor: 0, revision: 0)
  static let size = 256 * 1024

  /// The same pseudo-random value for the same seed and index on every run: zlib's CRC32 of both.
  static func noise(seed: UInt32, _ index: Int) -> UInt32 {
    var bytes: [UInt8] = []
    for shift in stride(from: 0, to: 32, by: 8) {
      bytes.append(UInt8(truncatingIfNeeded: seed >> UInt32(shift)))
    }
    for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: index >> shift)) }
    return CRC32.checksum(bytes)
  }

  /// Text-like bytes (they compress), every 4 KiB page its own.
  static let running: [UInt8] = {
    let words = ["slot", "image", "window", "commit", "journal", "boot", "trial", " ", "\n"]
    var bytes: [UInt8] = []
    var draw = 0
    while bytes.count < size {
      bytes += Array(words[Int(noise(seed: 7, draw) % UInt32(words.count))].utf8)
      draw += 1
    }
    return Array(bytes.prefix(size))
  }()

  /// The running image with one 4 KiB page in four rewritten.
  static let image: [UInt8] = {
    var image = running
    for page in stride(from: 0, to: size, by: 16384) {
      for index in page..<page + 4096 { image[index] = UInt8(truncatingIfNeeded: noise(seed: 8, index)) }
    }
    return image
  }()

  static func info(features: Features = .all) -> [UInt8] {
    var info = InfoRecord(
      state: .idle, runningSlot: .a, flags: [],
      slotVersions: SlotPair(a: Version(major: 1, minor: 0, revision: 0), b: .zero),
      inactiveSlotContent: .unknown, slotCapacity: UInt32(size * 2), windowCapacity: 64 * 1024,
      maxChunkPayload: 240,
      transfer: .idle, transferVersion: .zero, lastOutcome: .none, features: features)
    info.maxOperationLength = 64 * 1024
    info.runningImageSize = UInt32(size)
    info.runningImageCRC = CRC32.checksum(running)
    return info.encoded
  }

  /// The device's answer: blocks of `running`, at most `cap` hashes a page.
  static func answer(_ request: BlockHashRequest, cap: Int = 62) -> Response {
    let blockSize = Int(request.blockSize)
    let total = (size + blockSize - 1) / blockSize
    let count = min(Int(request.maxCount), total - Int(request.firstBlock), cap)
    let hashes = (0..<count).map { index in
      let start = (Int(request.firstBlock) + index) * blockSize
      return digest(running[start..<min(start + blockSize, size)])
    }
    let page = BlockHashPage(firstBlock: request.firstBlock, totalBlocks: UInt32(total), hashes: hashes)
    return Response(.blockHashes, .success, .blockHashes(page))
  }

  static func pageRequests(_ actions: [SenderAction]) -> [BlockHashRequest] {
    actions.compactMap {
      guard case .writeControl(let bytes) = $0, case .blockHashes(let request) = try? Request(bytes: bytes)
      else {
        return nil
      }
      return request
    }
  }

  static func otherControls(_ actions: [SenderAction]) -> [Request] {
    actions.compactMap {
      guard case .writeControl(let bytes) = $0, let request = try? Request(bytes: bytes) else { return nil }
      if case .blockHashes = request { return nil }
      return request
    }
  }

  var sender = SenderEngine(
    image: image, configuration: SenderConfiguration(version: version), blockDigest: digest)
  var now: Duration = .zero

  mutating func connect(mtu: ATTMTU, info: [UInt8] = info()) -> [SenderAction] {
    _ = sender.handle(.start(now: now))
    _ = sender.handle(.connected(mtu: mtu, now: now))
    return sender.handle(.info(info, now: now))
  }

  /// Answers every request as the device would until none is left; returns the last actions and
  /// every request seen, in order.
  mutating func answerAll(
    _ first: [BlockHashRequest], cap: Int = 62
  ) -> (last: [SenderAction], requests: [BlockHashRequest]) {
    var queue = first
    var seen = first
    var last: [SenderAction] = []
    while !queue.isEmpty {
      #expect(queue.count <= BlockHashPaging.depth, "never more than 4 outstanding")
      let request = queue.removeFirst()
      now += .milliseconds(30)
      last = sender.handle(.notification(Self.answer(request, cap: cap).encoded, now: now))
      let more = Self.pageRequests(last)
      queue += more
      seen += more
    }
    return (last, seen)
  }

  /// "the smallest power of two ≥ 4096 with ceil(size/B) / perPage ≤ 256 pages".
  @Test func theBlockSizeIsTheSmallestThatFitsIn256Pages() {
    // [P-CEN-8]
    let mib: UInt32 = 1024 * 1024
    #expect(BlockHashPaging.blockSize(imageSize: mib, perPage: 62) == 4096)  // 256 blocks, 5 pages
    #expect(BlockHashPaging.blockSize(imageSize: mib, perPage: 29) == 4096)  // 9 pages
    #expect(BlockHashPaging.blockSize(imageSize: mib, perPage: 1) == 4096)  // 256 pages
    #expect(BlockHashPaging.blockSize(imageSize: mib + 1, perPage: 1) == 8192)  // 257 would not do
    #expect(BlockHashPaging.blockSize(imageSize: 256 * mib, perPage: 62) == 32768)
    #expect(BlockHashPaging.blockSize(imageSize: 256 * mib, perPage: 29) == 65536)
    #expect(BlockHashPaging.blockSize(imageSize: 3000, perPage: 29) == 4096)
    #expect(
      BlockHashPaging.blockSize(imageSize: .max, perPage: 1) == 4 * mib, "never past the device's bound")
    // At MTU 247 a page holds 29, at the minimum MTU one.
    #expect(BlockHashPaging(imageSize: mib, mtu: 247)?.perPage == 29)
    #expect(BlockHashPaging(imageSize: mib, mtu: 23)?.perPage == 1)
    #expect(BlockHashPaging(imageSize: 0, mtu: 247) == nil)
  }

  /// At MTU 23 a page holds one hash: 64 requests, four in flight, the next sent per answer.
  @Test mutating func pagesArePipelinedFourDeep() {
    // [P-CEN-9]
    let first = Self.pageRequests(connect(mtu: 23))
    #expect(first.map(\.firstBlock) == [0, 1, 2, 3])
    #expect(first.allSatisfy { $0.blockSize == 4096 && $0.maxCount == 1 })
    now += .milliseconds(30)
    let next = Self.pageRequests(sender.handle(.notification(Self.answer(first[0]).encoded, now: now)))
    #expect(next.map(\.firstBlock) == [4], "one answer, one more request")
    let (last, requests) = answerAll(Array(first.dropFirst()) + next)
    #expect(([first[0]] + requests).map(\.firstBlock) == (0..<64).map { UInt32($0) })
    // All in: planned with them, then on as after Info.
    #expect(Self.otherControls(last) == [.features([.missingRanges, .operations, .packedOperations])])
    #expect(sender.report.transferMode == .blockHashes)
    #expect(sender.report.blockSize == 4096 && sender.report.blockHashesRead == 64)
    #expect(sender.report.blockHashRequests == 64)
    // A quarter of the image is new; the rest are copies.
    #expect(sender.report.plannedBytesOnAir < UInt64(Self.size) * 4 / 10)
  }

  @Test mutating func atMTU247APageHolds29() {
    // [P-CEN-8]
    let first = Self.pageRequests(connect(mtu: 247))
    #expect(first.map(\.firstBlock) == [0, 29, 58])
    #expect(first.map(\.maxCount) == [29, 29, 6])
    let (last, _) = answerAll(first)
    #expect(Self.otherControls(last) == [.features([.missingRanges, .operations, .packedOperations])])
    #expect(sender.report.transferMode == .blockHashes && sender.report.blockHashRequests == 3)
  }

  /// A device whose smallest MTU is below the central's answers short pages: the rest of each is
  /// asked for again, and every block's hash comes in.
  @Test mutating func shortPagesAreCompletedByMoreRequests() {
    let first = Self.pageRequests(connect(mtu: 247))
    let (last, requests) = answerAll(first, cap: 10)
    #expect(requests.count == 7, "64 hashes 10 at a time")
    #expect(Set(requests.map(\.firstBlock)) == [0, 10, 20, 29, 39, 49, 58])
    #expect(Self.otherControls(last) == [.features([.missingRanges, .operations, .packedOperations])])
    #expect(sender.report.blockHashesRead == 64 && sender.report.transferMode == .blockHashes)
  }

  /// "any error answer ...: plan without block hashes (the compressed plan) ...; never fail the push".
  @Test mutating func anErrorAnswerPlansWithoutHashes() {
    // [P-CEN-10]
    let first = Self.pageRequests(connect(mtu: 247))
    now += .milliseconds(30)
    let actions = sender.handle(.notification(Response(.blockHashes, .storageError).encoded, now: now))
    #expect(Self.pageRequests(actions).isEmpty)
    #expect(Self.otherControls(actions) == [.features([.missingRanges, .operations, .packedOperations])])
    #expect(sender.report.transferMode == .compressed && sender.report.blockHashesRead == 0)
    // The answers to the abandoned requests are skipped.
    for request in first.dropFirst() {
      let late = sender.handle(.notification(Self.answer(request).encoded, now: now))
      #expect(late.allSatisfy { if case .finished = $0 { false } else { true } })
      #expect(Self.pageRequests(late).isEmpty && Self.otherControls(late).isEmpty)
    }
    #expect(sender.phase == .checkingStatus)
  }

  @Test mutating func aMalformedOrLyingPagePlansWithoutHashes() {
    // [P-CEN-10]
    let first = Self.pageRequests(connect(mtu: 247))
    // A truncated page: the response decoder refuses it; no protocol error for the push.
    var actions = sender.handle(.notification([0x60, 0x09, 0x00, 0, 0], now: now))
    #expect(Self.otherControls(actions) == [.features([.missingRanges, .operations, .packedOperations])])
    #expect(sender.phase == .checkingStatus)
    // Another push: a page for blocks that were not asked for.
    var other = Self()
    let asked = Self.pageRequests(other.connect(mtu: 247))
    var wrong = Self.answer(asked[1])
    wrong.requestOpcode = Opcode.blockHashes.rawValue
    actions = other.sender.handle(.notification(wrong.encoded, now: now))
    #expect(Self.otherControls(actions) == [.features([.missingRanges, .operations, .packedOperations])])
    #expect(other.sender.report.transferMode == .compressed)
    _ = first
  }

  /// "a timeout ...: plan without block hashes": no disconnect, the push goes on.
  @Test mutating func aTimeoutPlansWithoutHashes() {
    // [P-TIME-8] [P-CEN-9] [P-CEN-10]
    let first = Self.pageRequests(connect(mtu: 247))
    #expect(first.count == 3)
    now += .seconds(4)
    #expect(sender.handle(.tick(now: now)).allSatisfy { if case .disconnect = $0 { false } else { true } })
    now += .seconds(1)
    let actions = sender.handle(.tick(now: now))
    #expect(!actions.contains(.disconnect))
    #expect(Self.otherControls(actions) == [.features([.missingRanges, .operations, .packedOperations])])
    #expect(sender.report.transferMode == .compressed)
  }

  /// "a disconnect while paging: plan without block hashes": the next connection does not page again.
  @Test mutating func aDisconnectWhilePagingPlansWithoutHashes() {
    // [P-CEN-10]
    let first = Self.pageRequests(connect(mtu: 247))
    now += .milliseconds(30)
    _ = sender.handle(.notification(Self.answer(first[0]).encoded, now: now))
    _ = sender.handle(.disconnected(now: now))
    now += .seconds(1)
    _ = sender.handle(.tick(now: now))
    _ = sender.handle(.connected(mtu: 247, now: now))
    let actions = sender.handle(.info(Self.info(), now: now))
    #expect(Self.pageRequests(actions).isEmpty)
    #expect(!actions.contains(.readBlockHashes))
    #expect(Self.otherControls(actions) == [.features([.missingRanges, .operations, .packedOperations])])
    #expect(sender.report.transferMode == .compressed)
    #expect(sender.report.blockHashRequests == 3, "the requests sent before the drop")
  }

  /// "a device without bit 2: the old single read, unchanged".
  @Test mutating func aDeviceWithoutBitTwoGetsTheOneValueRead() {
    let actions = connect(mtu: 247, info: Self.info(features: [.missingRanges, .operations]))
    #expect(actions.contains(.readBlockHashes))
    #expect(Self.pageRequests(actions).isEmpty)
  }

  /// Pages answered with another total (the running image changed under the central): no hashes.
  @Test mutating func anotherTotalPlansWithoutHashes() {
    // [P-CEN-10]
    let first = Self.pageRequests(connect(mtu: 247))
    let page = BlockHashPage(firstBlock: 0, totalBlocks: 65, hashes: [1])
    let actions = sender.handle(
      .notification(Response(.blockHashes, .success, .blockHashes(page)).encoded, now: now))
    #expect(Self.otherControls(actions) == [.features([.missingRanges, .operations, .packedOperations])])
    #expect(sender.report.transferMode == .compressed)
    #expect(first.count == 3, "64 blocks of 4 KiB in pages of 29: three requests")
  }
}

/// Paging a running slot whose image size the device does not know (Info offset 84 is 0): the
/// device hashes its whole slot, the central reads the blocks its new image's size covers, and
/// leaves out a last block whose length it cannot know.
@Suite struct UnknownSlotPagingTests {
  static func answer(_ asked: Request, total: UInt32, hash: (UInt32) -> UInt64 = { UInt64($0) + 100 })
    -> Response
  {
    guard case .blockHashes(let request) = asked else { fatalError("not a BLOCK HASHES request") }
    guard request.firstBlock < total else { return Response(.blockHashes, .invalidParameter) }
    let count = min(UInt32(request.maxCount), total - request.firstBlock)
    let hashes = (request.firstBlock..<request.firstBlock + count).map(hash)
    return Response(
      .blockHashes, .success,
      .blockHashes(BlockHashPage(firstBlock: request.firstBlock, totalBlocks: total, hashes: hashes)))
  }

  /// Answers every request as a device whose slot holds `total` blocks would, until done.
  static func run(_ paging: inout BlockHashPaging, total: UInt32) throws -> BlockHashes? {
    var pending: [Request] = []
    for _ in 0..<1000 {
      pending += paging.nextRequests()
      guard !pending.isEmpty else { return paging.complete }
      try paging.receive(answer(pending.removeFirst(), total: total))
    }
    return nil
  }

  @Test func aSlotLargerThanTheGuessIsReadAsFarAsTheGuess() throws {
    // [P-CEN-13]
    // 64 KiB guessed at MTU 23: 16 blocks of 4 KiB, one per page; the slot holds 100.
    var paging = try #require(BlockHashPaging(unknownImageOfAbout: 64 * 1024, mtu: 23))
    #expect(paging.blockSize == 4096 && paging.totalBlocks == 16 && paging.deviceBlocks == nil)
    let hashes = try #require(try Self.run(&paging, total: 100))
    #expect(paging.deviceBlocks == 100)
    // Every block read is whole: all 16 kept.
    #expect(hashes.hashes == (0..<16).map { UInt64($0) + 100 })
    #expect(paging.requestsSent == 16)
  }

  @Test func aSlotSmallerThanTheGuessEndsAtItsEndWithoutItsLastBlock() throws {
    // [P-CEN-13]
    // 10 blocks in the slot: the 10th may be short, so 9 are kept.
    var paging = try #require(BlockHashPaging(unknownImageOfAbout: 64 * 1024, mtu: 23))
    let hashes = try #require(try Self.run(&paging, total: 10))
    #expect(paging.totalBlocks == 10)
    #expect(hashes.hashes == (0..<9).map { UInt64($0) + 100 })
  }

  /// Four requests go before the first answer tells the slot's size: those past its end are
  /// refused, as they should be, and skipped rather than ending the paging.
  @Test func requestsSentPastTheSlotsEndAreSkipped() throws {
    // [P-CEN-13]
    var paging = try #require(BlockHashPaging(unknownImageOfAbout: 64 * 1024, mtu: 23))
    let first = paging.nextRequests()
    #expect(first.count == BlockHashPaging.depth)
    for request in first { try paging.receive(Self.answer(request, total: 2)) }
    #expect(paging.nextRequests().isEmpty)
    #expect(paging.complete?.hashes == [100])
  }

  /// A device that changes its count between answers, or says its slot has no blocks, ends the
  /// paging (the push goes on without copies).
  @Test func aCountThatChangesOrIsZeroEndsThePaging() throws {
    // [P-CEN-10]
    var paging = try #require(BlockHashPaging(unknownImageOfAbout: 64 * 1024, mtu: 23))
    let requests = paging.nextRequests()
    try paging.receive(Self.answer(requests[0], total: 10))
    #expect(throws: BlockHashPaging.Failure.self) { try paging.receive(Self.answer(requests[1], total: 11)) }
    var empty = try #require(BlockHashPaging(unknownImageOfAbout: 64 * 1024, mtu: 23))
    let asked = empty.nextRequests()
    let none = Response(
      .blockHashes, .success, .blockHashes(BlockHashPage(firstBlock: 0, totalBlocks: 0, hashes: [])))
    #expect(asked.count == 4)
    #expect(throws: BlockHashPaging.Failure.self) { try empty.receive(none) }
  }
}
