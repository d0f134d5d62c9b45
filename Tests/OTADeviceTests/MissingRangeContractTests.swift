import OTAWire
import Testing

/// docs/PROTOCOL.md's missing-range reports (feature bit 0) as a contract, in the bytes on the air,
/// against the same device as `ProtocolContractTests` (MTU 247, window capacity 4096, 100-byte
/// chunks here).
@Suite struct MissingRangeContractTests {
  typealias Contract = ProtocolContractTests

  static let optIn: [UInt8] = [0x08, 0x01, 0x00, 0x00, 0x00]

  static func report(highest: UInt32, _ ranges: [(UInt32, UInt16)]) -> [UInt8] {
    var bytes: [UInt8] = [0x61] + Contract.le32(highest)
    for (offset, length) in ranges {
      bytes += Contract.le32(offset) + [UInt8(length & 0xFF), UInt8(length >> 8)]
    }
    return bytes
  }

  /// PREPAREd, with the feature turned on.
  static func optedIn() throws -> ProtocolBench {
    var bench = try Contract.prepared()
    // "FEATURES ... answers success with the features now on": bit 0.
    #expect(try bench.controlBytes(optIn) == [[0x60, 0x08, 0x00, 0x01, 0x00, 0x00, 0x00]])
    return bench
  }

  @Test func infoAnnouncesTheFeatureAtOffset74() throws {
    // [P-REP-1] [P-INFO-24]
    let host = try DeviceFixture(slotCapacity: 4096).makeHost()
    let bytes = host.info(mtu: 247).encoded
    #expect(bytes.count == 114)
    // Bit 0 missing-range reports, bit 1 data operations, bit 2 BLOCK HASHES, bit 3 packed
    // operations, bit 4 zstd frames.
    #expect(Array(bytes[74..<78]) == [0x3F, 0x00, 0x00, 0x00])
  }

  @Test func featuresTurnsOnOnlyWhatTheDeviceSupports() throws {
    // [P-REQ-8] [P-RESP-5]
    var bench = try Contract.prepared()
    // "bits the device does not know are ignored": asking for all 32 gets bits 0, 1, 3 and 4 (BLOCK
    // HASHES, bit 2, needs no opt-in and is never listed).
    #expect(
      try bench.controlBytes([0x08, 0xFF, 0xFF, 0xFF, 0xFF]) == [[0x60, 0x08, 0x00, 0x1B, 0x00, 0x00, 0x00]])
    // "asking for none turns them off".
    #expect(try bench.controlBytes([0x08, 0, 0, 0, 0]) == [[0x60, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]])
  }

  @Test func aProvenGapIsReportedAndTheWindowWaitsForTheResend() throws {
    // [P-MISS-1] [P-MISS-3] [P-REP-2]
    var bench = try Self.optedIn()
    #expect(try bench.controlBytes(Contract.window(0, 1000, Contract.crc(0..<1000))).isEmpty)
    _ = try Contract.send(&bench, 0..<200, payload: 100)
    // "once 16 chunks were stored after the gap opened while it stayed open, and it has been open
    // 100 ms": the 16th chunk after 100 ms names it.
    let fifteen = try Contract.send(&bench, 300..<1800, payload: 100)
    #expect(fifteen.isEmpty, "15 later chunks may still be reordering")
    #expect(try bench.tick(after: .milliseconds(100)).isEmpty)
    let sixteenth = try Contract.send(&bench, 1800..<1900, payload: 100)
    #expect(sixteenth == [Self.report(highest: 1900, [(200, 100)])])
    // "the WINDOW waits for the resend instead of failing": no 0x07, then the resend completes it.
    #expect(try Contract.send(&bench, 1900..<2300, payload: 100).isEmpty)
    #expect(try Contract.send(&bench, 200..<300, payload: 100) == [Contract.windowAnswer(0x00, 1000)])
  }

  @Test func aReorderedChunkIsNeverReported() throws {
    // [P-REP-2]
    var bench = try Self.optedIn()
    _ = try bench.controlBytes(Contract.window(0, 4000, Contract.crc(0..<4000)))
    var notifications: [[UInt8]] = []
    // Every chunk moved up to 8 places late (EATT's bearers): nothing is reported or resent.
    for group in stride(from: 0, to: 4000, by: 1000) {
      notifications += try Contract.send(&bench, group + 100..<group + 1000, payload: 100)
      notifications += try Contract.send(&bench, group..<group + 100, payload: 100)
    }
    #expect(notifications == [Contract.windowAnswer(0x00, 4000)])
  }

  /// EATT's bearers are served in bursts: a chunk may arrive dozens of places late, but not 100 ms.
  @Test func aGapYoungerThan100msIsNotReportedHoweverManyChunksFollow() throws {
    // [P-REP-2]
    var bench = try Self.optedIn()
    _ = try Contract.send(&bench, 0..<100, payload: 100)
    // 48 chunks in 48 ms past the gap: not reported; the late chunk closes it.
    #expect(try Contract.send(&bench, 200..<2600, payload: 50).isEmpty)
    #expect(try Contract.send(&bench, 100..<200, payload: 100).isEmpty)
    #expect(try bench.tick(after: .milliseconds(100)).isEmpty)
    #expect(try Contract.send(&bench, 2600..<3000, payload: 100).isEmpty, "nothing is missing")
  }

  /// "a report found spurious (a chunk it named arrived twice: late, and resent) doubles the time a
  /// gap must stay open, up to the WINDOW's grace".
  @Test func aSpuriousReportWidensTheReorderWindow() throws {
    // [P-REP-3]
    var bench = try Self.optedIn()
    _ = try Contract.send(&bench, 0..<100, payload: 100)
    _ = try Contract.send(&bench, 200..<1700, payload: 100)
    _ = try bench.tick(after: .milliseconds(100))
    #expect(
      try Contract.send(&bench, 1700..<1800, payload: 100) == [Self.report(highest: 1800, [(100, 100)])])
    #expect(bench.host.engine.reorderWindow == .milliseconds(100))
    // The "lost" chunk was only late, and the central resent it: the second copy proves it.
    _ = try Contract.send(&bench, 100..<200, payload: 100)
    _ = try Contract.send(&bench, 100..<200, payload: 100)
    #expect(bench.host.engine.statistics.spuriousReports == 1)
    #expect(bench.host.engine.reorderWindow == .milliseconds(200))
    // The next gap needs 200 ms: at 116 ms it is not named, at 216 ms it is.
    _ = try Contract.send(&bench, 1900..<3500, payload: 100)
    _ = try bench.tick(after: .milliseconds(100))
    #expect(try Contract.send(&bench, 3500..<3600, payload: 100).isEmpty)
    _ = try bench.tick(after: .milliseconds(100))
    #expect(
      try Contract.send(&bench, 3600..<3700, payload: 100) == [Self.report(highest: 3700, [(1800, 100)])])
  }

  /// The late copy may come after its resend completed the WINDOW and the device committed it
  /// (seen through bluetoothd with EATT: a bearer's burst more than 100 ms plus a round trip
  /// late). It is the same proof: the report was spurious, and the chunk is a duplicate, not a
  /// dropped one.
  @Test func aLateCopyAfterItsWindowCommittedStillProvesTheReportSpurious() throws {
    // [P-REP-4]
    var bench = try Self.optedIn()
    #expect(try bench.controlBytes(Contract.window(0, 1800, Contract.crc(0..<1800))).isEmpty)
    _ = try Contract.send(&bench, 0..<100, payload: 100)
    _ = try Contract.send(&bench, 200..<1700, payload: 100)
    _ = try bench.tick(after: .milliseconds(100))
    #expect(
      try Contract.send(&bench, 1700..<1800, payload: 100) == [Self.report(highest: 1800, [(100, 100)])])
    // The resend completes the WINDOW: committed.
    #expect(try Contract.send(&bench, 100..<200, payload: 100) == [Contract.windowAnswer(0x00, 1800)])
    let dropped = bench.host.engine.statistics.chunksDropped
    // Then the original arrives, below the committed offset.
    #expect(try Contract.send(&bench, 100..<200, payload: 100).isEmpty)
    #expect(bench.host.engine.statistics.spuriousReports == 1)
    #expect(bench.host.engine.reorderWindow == .milliseconds(200))
    #expect(bench.host.engine.statistics.chunksDropped == dropped)
    // Once per report: a third copy proves nothing more.
    _ = try Contract.send(&bench, 100..<200, payload: 100)
    #expect(bench.host.engine.statistics.spuriousReports == 1)
    // A committed chunk no report named is still dropped, as before.
    _ = try Contract.send(&bench, 300..<400, payload: 100)
    #expect(bench.host.engine.statistics.chunksDropped == dropped + 2)
  }

  @Test func aReportedGapStillOpenIsReportedAgainAfter32MoreChunks() throws {
    // [P-REP-6]
    var bench = try Self.optedIn()
    _ = try Contract.send(&bench, 0..<100, payload: 100)
    #expect(try Contract.send(&bench, 200..<1700, payload: 100).isEmpty)
    #expect(try bench.tick(after: .milliseconds(100)).isEmpty)
    #expect(
      try Contract.send(&bench, 1700..<1800, payload: 100) == [Self.report(highest: 1800, [(100, 100)])])
    // "a gap reported and still open is reported again once 32 more chunks were stored".
    #expect(try Contract.send(&bench, 1800..<3350, payload: 50).isEmpty)
    #expect(try Contract.send(&bench, 3350..<3400, payload: 50) == [Self.report(highest: 3400, [(100, 100)])])
  }

  @Test func aWindowsTailIsReportedAfterTheGraceThenFailsAfterFourGraces() throws {
    // [P-TIME-5] [P-REP-7]
    var bench = try Self.optedIn()
    _ = try bench.controlBytes(Contract.window(0, 1000, Contract.crc(0..<1000)))
    _ = try Contract.send(&bench, 0..<800, payload: 100)
    // "the grace (400 ms) passes with a gap open: the device reports every gap of the waiting
    // WINDOW, the part past everything stored included, and waits again".
    for _ in 0..<4 {
      #expect(try bench.tick(after: .milliseconds(400)) == [Self.report(highest: 800, [(800, 200)])])
    }
    // "after four reports ... fails it with 0x07 missing data as without the feature".
    #expect(try bench.tick(after: .milliseconds(400)) == [Contract.windowAnswer(0x07, 800)])
  }

  @Test func withoutFeaturesNothingIsReportedAndTheBaseProtocolHolds() throws {
    // [P-REP-1]
    var bench = try Contract.prepared()
    _ = try bench.controlBytes(Contract.window(0, 1000, Contract.crc(0..<1000)))
    _ = try Contract.send(&bench, 0..<200, payload: 100)
    // "A device uses a feature only with a central that asked for it": the old 0x07 path, on the
    // 16th chunk past the window's end.
    let later = try Contract.send(&bench, 300..<2600, payload: 100)
    #expect(later == [Contract.windowAnswer(0x07, 200)])
  }

  @Test func aDisconnectTurnsTheFeatureOff() throws {
    // [P-REP-1]
    var bench = try Self.optedIn()
    try bench.reconnect()
    _ = try bench.controlBytes(Contract.window(0, 1000, Contract.crc(0..<1000)))
    _ = try Contract.send(&bench, 0..<200, payload: 100)
    #expect(try Contract.send(&bench, 300..<2600, payload: 100) == [Contract.windowAnswer(0x07, 200)])
  }
}

extension MissingRangeContractTests {
  @Test func reportsFitTheSmallestMTUTheCentralUsed() throws {
    // [P-SESS-4] [P-MISS-2]
    var bench = try Self.optedIn()
    // EATT: another bearer with MTU 23 (20-byte notifications) on the same connection.
    try bench.bearer(mtu: 23)
    try bench.bearer(mtu: 247)  // and the first bearer writes again
    _ = try bench.controlBytes(Contract.window(0, 1000, Contract.crc(0..<1000)))
    for start in [0, 100, 200, 300, 400, 600, 800] {
      #expect(try Contract.send(&bench, start..<start + 100, payload: 100).isEmpty)
    }
    // Three gaps after the grace; "at most (MTU − 3 − 5) / 6 ranges": 2 in 17 bytes.
    let report = try bench.tick(after: .milliseconds(400))
    #expect(report == [Self.report(highest: 900, [(500, 100), (700, 100)])])
    #expect(report.allSatisfy { $0.count <= 20 })
  }

  @Test func aCRCMismatchIsAnsweredAsWithoutTheFeature() throws {
    // [P-REP-8]
    var bench = try Self.optedIn()
    _ = try bench.controlBytes(Contract.window(0, 300, Contract.crc(0..<300)))
    var corrupted = Array(Contract.image[0..<100])
    corrupted[3] ^= 0x10
    _ = try Contract.send(&bench, 100..<300, payload: 100)
    // The committed offset, everything past it forgotten; no report names the corrupted bytes.
    #expect(try bench.data(Contract.chunk(0, corrupted)) == [Contract.windowAnswer(0x06, 0)])
    #expect(bench.host.engine.coverage.isEmpty)
    #expect(bench.host.engine.statistics.missingReports == 0)
  }
}
