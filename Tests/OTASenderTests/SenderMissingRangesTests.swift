import OTAChecksum
import Testing

@testable import OTASender
@testable import OTAWire

/// The central with missing-range reports (feature bit 0): it turns them on only when Info
/// announces them, resends exactly the reported chunks ahead of new data, and a repeated report
/// costs no duplicate until the resend is shown lost.
@Suite struct SenderMissingRangesTests {
  typealias Fixture = SenderEngineTests
  static let image = Fixture.image

  static func info(features: Features) -> [UInt8] {
    var info = try? InfoRecord(bytes: Fixture.info())
    info?.features = features
    return info?.encoded ?? []
  }

  var fixture = Fixture()

  /// Connected, FEATURES agreed, PREPAREd with window capacity 256 and 100-byte chunks: windows of
  /// 128 (0..<100, 100..<128), then 128..<256 (128..<228, 228..<256).
  mutating func transferring(capacity: UInt32 = 256) {
    #expect(
      Fixture.controls(fixture.connect(info: Self.info(features: .missingRanges))) == [
        .features(.missingRanges)
      ])
    #expect(
      Fixture.controls(fixture.answer(Response(.features, .success, .features(.missingRanges)))) == [.status])
    _ = fixture.answer(Response(.status, .success, .status(.idle)))
    _ = fixture.answer(
      Response(.prepare, .success, .prepared(windowCapacity: capacity, maxChunkPayload: 100)))
  }

  mutating func report(_ highest: UInt32, _ ranges: [Range<UInt32>]) -> [SenderAction] {
    fixture.feed(
      .notification(MissingReport(highestStored: highest, ranges: ranges).encoded, now: fixture.now))
  }

  @Test mutating func featuresAreAskedForOnlyWhenInfoAnnouncesThem() {
    // [P-CEN-7] [P-PHASE-4]
    #expect(Fixture.controls(fixture.connect(info: Self.info(features: []))) == [.status])
    var older = Fixture()
    older.sender = SenderEngine(
      image: Self.image,
      configuration: SenderConfiguration(version: Fixture.version, missingRangeReports: false))
    #expect(Fixture.controls(older.connect(info: Self.info(features: .missingRanges))) == [.status])
  }

  @Test mutating func aRefusedFeaturesRequestLeavesTheBasePath() {
    // [P-PHASE-4]
    _ = fixture.connect(info: Self.info(features: .missingRanges))
    #expect(Fixture.controls(fixture.answer(Response(.features, .unknownOpcode))) == [.status])
    _ = fixture.answer(Response(.status, .success, .status(.idle)))
    _ = fixture.answer(Response(.prepare, .success, .prepared(windowCapacity: 256, maxChunkPayload: 100)))
    _ = fixture.feed(.writable(count: 4, now: fixture.now))
    #expect(Fixture.chunks(report(256, [0..<100])).isEmpty, "a report nobody asked for is ignored")
  }

  @Test mutating func reportedChunksGoFirstAndOnlyThem() {
    // [P-CEN-5]
    transferring()
    #expect(
      Fixture.chunks(fixture.feed(.writable(count: 3, now: fixture.now))).map(\.offset) == [0, 100, 128])
    #expect(Fixture.chunks(report(228, [100..<128])).isEmpty, "no credit")
    let actions = fixture.feed(.writable(count: 2, now: fixture.now))
    #expect(Fixture.chunks(actions).map { $0.offset..<UInt32($0.end) } == [100..<128, 228..<256])
    #expect(fixture.sender.report.chunksResent == 1 && fixture.sender.report.bytesResent == 28)
  }

  @Test mutating func aRepeatedReportResendsOnlyOnceTheResendIsShownLost() {
    // [P-CEN-6]
    transferring()
    _ = fixture.feed(.writable(count: 3, now: fixture.now))
    _ = report(228, [0..<100])
    #expect(Fixture.chunks(fixture.feed(.writable(count: 1, now: fixture.now))).map(\.offset) == [0])
    // The same report again (sent before the resend could arrive): nothing.
    _ = report(228, [0..<100])
    #expect(Fixture.chunks(fixture.feed(.writable(count: 1, now: fixture.now))).map(\.offset) == [228])
    // After the resend's timeout, a report that still names it sends it again.
    fixture.now += .milliseconds(300)
    _ = report(256, [0..<100])
    #expect(Fixture.chunks(fixture.feed(.writable(count: 1, now: fixture.now))).map(\.offset) == [0])
    #expect(fixture.sender.report.chunksResent == 2)
  }

  @Test mutating func missingDataDoesNotShrinkTheWindowsWhenReportsAreOn() {
    // [P-CEN-5] [P-PHASE-6]
    transferring(capacity: 2048)
    _ = fixture.feed(.writable(count: 4, now: fixture.now))
    let before = fixture.sender.transfer?.windowSize
    #expect(before != nil, "transferring")
    _ = fixture.answer(Response(.window, .missingData, .offset(100)))
    #expect(fixture.sender.transfer?.windowSize == before)
    // Without reports the base path halves them (AIMD).
    var older = Fixture()
    _ = older.connect()
    _ = older.answer(Response(.status, .success, .status(.idle)))
    _ = older.answer(Response(.prepare, .success, .prepared(windowCapacity: 2048, maxChunkPayload: 100)))
    _ = older.feed(.writable(count: 12, now: older.now))
    let larger = older.sender.transfer?.windowSize ?? 0
    _ = older.answer(Response(.window, .missingData, .offset(100)))
    #expect((older.sender.transfer?.windowSize ?? .max) < larger)
  }
}
