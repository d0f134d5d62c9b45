import OTAChecksum
import OTAJournal
import Testing

@testable import OTAEngine
@testable import OTAWire

@Suite struct ReceiverEngineTests {
  static let image: [UInt8] = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
  static let crc = CRC32.checksum(image)
  static let version = Version(major: 2, minor: 0, revision: 1)

  func prepared() -> ReceiverScript {
    var script = ReceiverScript()
    script.send(.prepare(size: UInt32(Self.image.count), crc32: Self.crc, version: Self.version))
    return script
  }

  func window(_ offset: Int, _ length: Int) -> Request {
    .window(
      offset: UInt32(offset), length: UInt32(length),
      crc32: CRC32.checksum(Self.image[offset..<offset + length]))
  }

  mutating func stream(_ script: inout ReceiverScript, _ range: Range<Int>, chunk: Int = 16) {
    for start in stride(from: range.lowerBound, to: range.upperBound, by: chunk) {
      let end = min(start + chunk, range.upperBound)
      script.chunk(UInt32(start), Self.image[start..<end])
    }
  }

  @Test mutating func wholeTransferInOrder() {
    var script = prepared()
    #expect(
      script.take() == [Response(.prepare, .success, .prepared(windowCapacity: 256, maxChunkPayload: 16))])
    #expect(script.journal?.slot == .b, "always the slot that is not running")
    for start in stride(from: 0, to: 1000, by: 256) {
      let end = min(start + 256, 1000)
      stream(&script, start..<end)
      script.send(window(start, end - start))
      #expect(script.take() == [Response(.window, .success, .offset(UInt32(end)))])
      #expect(script.journal?.committedOffset == UInt32(end), "the journal moves with each window")
    }
    script.send(.validate)
    #expect(script.take() == [Response(.validate, .success)])
    #expect(script.journal?.state == .validated)
    #expect(Array(script.slot[0..<1000]) == Self.image)
    script.send(.activate(permanent: false))
    #expect(script.take() == [Response(.activate, .success)])
    #expect(script.restarts == 1)
  }

  @Test mutating func chunksInAnyOrderAndTwiceConvergeWithoutResend() {
    // [P-DATA-5]
    var script = prepared()
    _ = script.take()
    var offsets = Array(stride(from: 0, to: 256, by: 16))
    var generator = SystemRandomNumberGenerator()
    offsets.shuffle(using: &generator)
    for offset in offsets + offsets.prefix(5) {
      script.chunk(UInt32(offset), Self.image[offset..<offset + 16])
    }
    script.send(window(0, 256))
    #expect(script.take() == [Response(.window, .success, .offset(256))])
    #expect(script.engine.statistics.chunksDuplicate == 5)
    #expect(script.engine.statistics.chunksStored == 16, "a chunk already stored is not written again")
  }

  @Test mutating func windowOvertakingItsLastChunksWaitsForThem() {
    // [P-WIN-10]
    var script = prepared()
    _ = script.take()
    stream(&script, 0..<224)
    script.send(window(0, 256))
    #expect(script.take().isEmpty, "no answer while the window's end is still on its way")
    #expect(script.timers == [.milliseconds(100)])
    stream(&script, 224..<256)
    #expect(script.take() == [Response(.window, .success, .offset(256))])
    script.advance(.milliseconds(200))
    #expect(script.take().isEmpty, "the grace timer of a window already answered does nothing")
  }

  @Test mutating func missingChunkFailsAfterGraceWithTheFirstGap() {
    // [P-TIME-5]
    var script = prepared()
    _ = script.take()
    stream(&script, 0..<96)
    stream(&script, 112..<256)
    script.send(window(0, 256))
    script.advance(.milliseconds(50))
    #expect(script.take().isEmpty)
    script.advance(.milliseconds(60))
    #expect(script.take() == [Response(.window, .missingData, .offset(96))])
    // Only the gap is resent; what was stored is kept.
    stream(&script, 96..<112)
    script.send(window(0, 256))
    #expect(script.take() == [Response(.window, .success, .offset(256))])
  }

  @Test mutating func aGapThatLaterChunksPassedByFailsWithoutWaitingOutTheGrace() {
    var script = ReceiverScript()
    script.engine = ReceiverEngine(
      configuration: ReceiverConfiguration(
        slotCapacity: 4096, windowCapacity: 512, windowGrace: .seconds(10), lossEvidenceChunks: 4),
      runningSlot: .a, journal: nil)
    script.send(.prepare(size: UInt32(Self.image.count), crc32: Self.crc, version: Self.version))
    _ = script.take()
    stream(&script, 0..<48)
    stream(&script, 64..<256)
    script.send(window(0, 256))
    stream(&script, 256..<304)  // three chunks of the next window: could still be reordering
    #expect(script.take().isEmpty)
    stream(&script, 304..<320)  // the fourth: the chunk at 48 is lost
    #expect(script.take() == [Response(.window, .missingData, .offset(48))])
  }

  @Test mutating func crcMismatchDropsTheWindowAndQueuedOnes() {
    // [SEC-CHECK-10]
    var script = prepared()
    _ = script.take()
    var corrupt = Array(Self.image[0..<128])
    corrupt[5] ^= 0x40
    script.chunk(0, corrupt)
    stream(&script, 128..<256)
    script.send(window(0, 128))
    #expect(script.take() == [Response(.window, .crcMismatch, .offset(0))])
    #expect(script.engine.coverage.isEmpty, "nothing past the committed offset is trusted after a mismatch")
    #expect(script.journal?.committedOffset == 0)
  }

  @Test mutating func pipelinedWindowsAreAnsweredInOrder() {
    var script = prepared()
    _ = script.take()
    stream(&script, 0..<100)
    script.send(window(0, 128))
    script.send(window(128, 128))
    stream(&script, 128..<256)
    #expect(script.take().isEmpty)
    stream(&script, 100..<128)
    #expect(
      script.take() == [Response(.window, .success, .offset(128)), Response(.window, .success, .offset(256))])
  }

  @Test mutating func queuedWindowsFailWithTheHead() {
    var script = prepared()
    _ = script.take()
    stream(&script, 0..<64)
    script.send(window(0, 128))
    script.send(window(128, 128))
    script.advance(.milliseconds(150))
    #expect(
      script.take() == [
        Response(.window, .missingData, .offset(64)), Response(.window, .missingData, .offset(64)),
      ])
  }

  @Test mutating func chunksOutsideTheReceiveSpanAreDroppedAndCounted() {
    // [P-DATA-4] [P-SPAN-1] [SEC-CHECK-4]
    var script = ReceiverScript(receiveSpan: 512)
    script.send(.prepare(size: UInt32(Self.image.count), crc32: Self.crc, version: Self.version))
    _ = script.take()
    script.chunk(512, Self.image[512..<528])  // past committed + receive span
    script.chunk(990, Self.image[990..<1000] + [1, 2])  // past the image's end
    script.feed(.data([1, 2, 3, 4], now: .zero))  // no image byte
    #expect(script.engine.statistics.chunksDropped == 3)
    #expect(script.engine.coverage.isEmpty)
    #expect(script.performed.filter { if case .write = $0 { true } else { false } }.isEmpty)
    // Past the window capacity (256) but inside the span: stored, and committed by its WINDOW
    // once the first window is.
    script.chunk(256, Self.image[256..<512])
    #expect(script.engine.statistics.chunksDropped == 3)
    #expect(script.engine.coverage.contains(256..<512))
    script.chunk(0, Self.image[0..<256])
    script.send(window(0, 256))
    script.send(window(256, 256))
    #expect(
      script.take() == [Response(.window, .success, .offset(256)), Response(.window, .success, .offset(512))])
    #expect(script.journal?.committedOffset == 512)
  }

  /// A client that scatters one-byte chunks across the span: the stored ranges stop at their limit
  /// (a write above them all that would open one more is dropped and counted; one below the
  /// highest takes its place), and the next window still fills and commits.
  @Test mutating func scatteredChunksStopAtTheRangeLimit() {
    // [P-SPAN-1] [SEC-CHECK-4]
    var script = ReceiverScript(windowCapacity: 512, receiveSpan: 1000, maxStoredRanges: 8)
    script.send(.prepare(size: UInt32(Self.image.count), crc32: Self.crc, version: Self.version))
    _ = script.take()
    for offset in stride(from: 0, to: 1000, by: 10) {
      script.chunk(UInt32(offset), Self.image[offset..<offset + 1])
    }
    #expect(script.engine.coverage.ranges.count == 8)
    #expect(script.engine.coverage.ranges.last == 70..<71)
    #expect(script.engine.statistics.chunksDropped == 100 - 8)
    // Extending a stored range opens none: stored.
    script.chunk(1, Self.image[1..<5])
    #expect(script.engine.coverage.contains(0..<5))
    // Below the highest: stored, the highest forgotten.
    script.chunk(65, Self.image[65..<66])
    #expect(script.engine.coverage.ranges.count == 8)
    #expect(script.engine.coverage.ranges.last == 65..<66)
    #expect(script.engine.statistics.chunksDropped == 100 - 8)
    // Data operations obey the same limit.
    script.feed(.control(Request.features([.operations]).encoded, now: .zero))
    _ = script.take()
    script.operation(DataOperation(offset: 300, body: .raw(Self.image[300..<302])))
    #expect(script.engine.statistics.operationsRejected == 1)
    for offset in stride(from: 0, to: 512, by: 128) {
      script.operation(DataOperation(offset: UInt32(offset), body: .raw(Self.image[offset..<offset + 128])))
    }
    script.send(window(0, 512))
    #expect(script.take() == [Response(.window, .success, .offset(512))])
  }

  @Test func theDefaultSpanIsSixteenWindowsOrFourMiBAtMostSixteenMiB() {
    // [P-SPAN-2]
    #expect(ReceiverConfiguration(slotCapacity: 1 << 30).receiveSpan == 4 << 20)
    #expect(ReceiverConfiguration(slotCapacity: 1 << 30, windowCapacity: 256 << 10).receiveSpan == 4 << 20)
    #expect(ReceiverConfiguration(slotCapacity: 1 << 30, windowCapacity: 512 << 10).receiveSpan == 8 << 20)
    #expect(ReceiverConfiguration(slotCapacity: 1 << 30, windowCapacity: 4 << 20).receiveSpan == 16 << 20)
    #expect(ReceiverConfiguration(slotCapacity: 1 << 30, receiveSpan: 100).receiveSpan == 64 * 1024)
  }

  @Test mutating func windowOfACommittedRangeIsAnsweredAgain() {
    // [P-WIN-5]
    var script = prepared()
    _ = script.take()
    stream(&script, 0..<256)
    script.send(window(0, 256))
    script.send(window(0, 256))
    #expect(
      script.take() == [Response(.window, .success, .offset(256)), Response(.window, .success, .offset(256))])
  }

  @Test mutating func badWindowsAreRefusedWithTheCommittedOffset() {
    // [SEC-CHECK-10]
    var script = prepared()
    _ = script.take()
    script.send(.window(offset: 0, length: 0, crc32: 0))
    script.send(.window(offset: 0, length: 257, crc32: 0))
    script.send(.window(offset: 990, length: 20, crc32: 0))
    script.send(.window(offset: 16, length: 16, crc32: 0))
    #expect(script.take() == Array(repeating: Response(.window, .invalidParameter, .offset(0)), count: 4))
  }

  @Test func prepareRefusesBadSizes() {
    var script = ReceiverScript(capacity: 4096)
    script.send(.prepare(size: 4097, crc32: 0, version: Self.version))
    script.send(.prepare(size: 0, crc32: 0, version: Self.version))
    #expect(script.take() == [Response(.prepare, .tooLarge), Response(.prepare, .invalidParameter)])
    #expect(script.performed.isEmpty, "nothing is touched for a refused image")
    script.send(.prepare(size: 4096, crc32: 0, version: Self.version))
    #expect(
      script.take() == [Response(.prepare, .success, .prepared(windowCapacity: 256, maxChunkPayload: 16))])
  }

  @Test func prepareIsRefusedWhileRunningOnTrial() {
    // [P-PREP-2]
    var script = ReceiverScript()
    script.engine = ReceiverEngine(
      configuration: script.engine.configuration, runningSlot: .b, runningOnTrial: true, journal: nil)
    script.send(.prepare(size: 10, crc32: 0, version: Self.version))
    #expect(script.take() == [Response(.prepare, .invalidState)])
    script.send(.confirm)
    script.send(.prepare(size: 10, crc32: 0, version: Self.version))
    let answers = script.take()
    #expect(answers.map(\.status) == [.success, .success])
    #expect(script.journal?.slot == .a)
  }

  @Test func requestsOutOfOrderAreInvalidState() {
    var script = ReceiverScript()
    script.send(.window(offset: 0, length: 16, crc32: 0))
    script.send(.validate)
    script.send(.activate(permanent: false))
    #expect(script.take().map(\.status) == [.invalidState, .invalidState, .invalidState])
    script.send(.abort)
    script.send(.status)
    #expect(script.take() == [Response(.abort, .success), Response(.status, .success, .status(.idle))])
  }

  @Test func malformedRequestsGetAStatusEach() {
    var script = ReceiverScript()
    script.sendRaw([])
    script.sendRaw([0x42])
    script.sendRaw([0x01, 1, 2])
    script.sendRaw([0x03])
    script.sendRaw([0x05, 0x80])
    #expect(
      script.take() == [
        Response(requestOpcode: 0, status: .invalidLength),
        Response(requestOpcode: 0x42, status: .unknownOpcode),
        Response(.prepare, .invalidLength), Response(.window, .invalidLength, .offset(0)),
        Response(.activate, .invalidParameter),
      ])
  }

  @Test mutating func validateBeforeTheEndIsMissingData() {
    // [P-VAL-1]
    var script = prepared()
    _ = script.take()
    stream(&script, 0..<256)
    script.send(window(0, 256))
    script.send(.validate)
    #expect(script.take().last == Response(.validate, .missingData))
  }

  @Test mutating func failedValidationDropsTheTransfer() {
    // [P-VAL-7]
    var script = prepared()
    _ = script.take()
    script.imageVerdict = .invalid(.crcMismatch, reason: "whole-image CRC")
    for start in stride(from: 0, to: 1000, by: 256) {
      let end = min(start + 256, 1000)
      stream(&script, start..<end)
      script.send(window(start, end - start))
    }
    _ = script.take()
    script.send(.validate)
    #expect(script.take() == [Response(.validate, .crcMismatch)])
    #expect(script.engine.phase == .idle)
    #expect(script.journal == nil)
  }

  @Test mutating func storageFailuresAnswerWithStorageErrorAndKeepTheCommittedOffset() {
    // [P-STOR-1] [P-VAL-8]
    var script = prepared()
    _ = script.take()
    stream(&script, 0..<256)
    script.failNext = { if case .commit = $0 { true } else { false } }
    script.send(window(0, 256))
    #expect(script.take() == [Response(.window, .storageError, .offset(0))])
    #expect(script.engine.transferStatus.committedOffset == 0)
    stream(&script, 0..<256)
    script.send(window(0, 256))
    #expect(script.take() == [Response(.window, .success, .offset(256))])
    script.failNext = { if case .write = $0 { true } else { false } }
    script.chunk(256, Self.image[256..<272])
    #expect(script.engine.statistics.writeFailures == 1)
    #expect(script.engine.coverage.isEmpty, "a failed write is not counted as stored")
  }

  /// A chunk that arrived but could not be written (a full disk) is the device's fault, not the
  /// link's: the window holding it fails with "storage error", at once and not after the grace.
  @Test mutating func aFailedWriteFailsItsWindowWithStorageErrorNotMissingData() {
    // [P-STOR-2] [SEC-ATK-41]
    var script = prepared()
    _ = script.take()
    stream(&script, 0..<256)
    script.send(window(0, 256))
    #expect(script.take() == [Response(.window, .success, .offset(256))])
    // The WINDOW overtook its chunks and waits; then one of them cannot be written.
    script.send(window(256, 256))
    stream(&script, 256..<320)
    script.failNext = { if case .write(_, 320, _) = $0 { true } else { false } }
    stream(&script, 320..<512)
    #expect(script.take() == [Response(.window, .storageError, .offset(256))])
    #expect(script.engine.failedWrite == nil, "answered once")
    // The same failure before the WINDOW arrives is reported when it does.
    script.failNext = { if case .write(_, 256, _) = $0 { true } else { false } }
    stream(&script, 256..<512)
    script.send(window(256, 256))
    #expect(script.take() == [Response(.window, .storageError, .offset(256))])
    // Nothing is lost for good: the resend commits.
    stream(&script, 256..<512)
    script.send(window(256, 256))
    #expect(script.take() == [Response(.window, .success, .offset(512))])
  }

  /// A failed write past the waiting window does not fail that window: it commits, and the next
  /// one, which holds the failure, answers "storage error".
  @Test mutating func aFailedWriteBlamesOnlyTheWindowHoldingIt() {
    var script = ReceiverScript(windowCapacity: 512)
    script.send(.prepare(size: UInt32(Self.image.count), crc32: Self.crc, version: Self.version))
    _ = script.take()
    stream(&script, 0..<256)
    script.failNext = { if case .write(_, 256, _) = $0 { true } else { false } }
    stream(&script, 256..<512)
    script.send(window(0, 256))
    script.send(window(256, 256))
    #expect(
      script.take() == [
        Response(.window, .success, .offset(256)), Response(.window, .storageError, .offset(256)),
      ])
    script.advance(.seconds(1))
    #expect(script.take().isEmpty, "no missing-data answer follows")
  }

  @Test mutating func prepareStorageFailureLeavesTheDeviceIdle() {
    var script = ReceiverScript()
    script.failNext = { if case .prepare = $0 { true } else { false } }
    script.send(.prepare(size: 100, crc32: 0, version: Self.version))
    #expect(script.take() == [Response(.prepare, .storageError)])
    #expect(script.engine.phase == .idle)
  }

  @Test func resumesFromAJournalForTheInactiveSlotOnly() {
    // [SEC-LIMIT-3]
    let journal = TransferJournal(
      slot: .b, state: .receiving, size: 1000, crc32: Self.crc, version: Self.version, committedOffset: 512)
    var script = ReceiverScript(running: .a, journal: journal)
    script.send(.status)
    #expect(
      script.take() == [
        Response(
          .status, .success,
          .status(TransferStatus(state: .receiving, size: 1000, crc32: Self.crc, committedOffset: 512)))
      ])
    let stale = ReceiverEngine(
      configuration: ReceiverConfiguration(slotCapacity: 4096), runningSlot: .b, journal: journal)
    #expect(stale.phase == .idle, "a journal for the running slot is never resumed")
  }

  @Test mutating func disconnectForgetsUncommittedChunks() {
    var script = prepared()
    _ = script.take()
    stream(&script, 0..<100)
    script.send(window(0, 256))
    script.feed(.disconnected)
    #expect(script.engine.coverage.isEmpty)
    script.advance(.seconds(1))
    #expect(script.take().isEmpty, "nobody to answer after a disconnect")
  }

  @Test mutating func abortDropsTheTransfer() {
    var script = prepared()
    _ = script.take()
    script.send(.abort)
    #expect(script.take() == [Response(.abort, .success)])
    #expect(script.journal == nil)
    #expect(script.engine.phase == .idle)
  }
}
