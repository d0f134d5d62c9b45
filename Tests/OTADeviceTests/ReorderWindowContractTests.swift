import OTAChecksum
import OTAWire
import Testing

/// docs/PROTOCOL.md's reorder window (missing-range reports, feature bit 0): how far it widens,
/// how long it lasts, and what proves a report spurious. 10-byte chunks, so that a device with a
/// 4096-byte window capacity holds several reports' worth.
@Suite struct ReorderWindowContractTests {
  typealias Contract = ProtocolContractTests
  typealias Reports = MissingRangeContractTests

  /// From `base`: one chunk, a gap of one, 15 chunks, `age` passing, the 16th chunk; returns what
  /// the 16th caused (a report naming the gap once it is proven lost).
  static func gap(_ bench: inout ProtocolBench, at base: Int, age: Duration) throws -> [[UInt8]] {
    _ = try Contract.send(&bench, base..<base + 10, payload: 10)
    #expect(try Contract.send(&bench, base + 20..<base + 170, payload: 10).isEmpty)
    _ = try bench.tick(after: age)
    return try Contract.send(&bench, base + 170..<base + 180, payload: 10)
  }

  /// A report that turns out spurious: the gap is reported, then its chunk arrives twice.
  static func spuriousReport(_ bench: inout ProtocolBench, at base: Int) throws {
    let age = bench.host.engine.reorderWindow
    let report = try gap(&bench, at: base, age: age)
    #expect(report == [Reports.report(highest: UInt32(base + 180), [(UInt32(base + 10), 10)])])
    _ = try Contract.send(&bench, base + 10..<base + 20, payload: 10)
    _ = try Contract.send(&bench, base + 10..<base + 20, payload: 10)
  }

  @Test func theReorderWindowDoublesUpTo400msAndADisconnectKeepsIt() throws {
    // [P-REP-3]
    var bench = try Reports.optedIn()
    #expect(bench.host.engine.reorderWindow == .milliseconds(100))
    var widths: [Duration] = []
    for base in [0, 180, 360, 540] {
      try Self.spuriousReport(&bench, at: base)
      widths.append(bench.host.engine.reorderWindow)
    }
    #expect(widths == [.milliseconds(200), .milliseconds(400), .milliseconds(400), .milliseconds(400)])
    #expect(bench.host.engine.statistics.spuriousReports == 4)
    // The central reconnects and turns reports on again: a gap 300 ms old is still not proven.
    try bench.reconnect()
    #expect(try bench.controlBytes(Reports.optIn) == [[0x60, 0x08, 0x00, 0x01, 0x00, 0x00, 0x00]])
    #expect(try Self.gap(&bench, at: 0, age: .milliseconds(300)).isEmpty)
    _ = try bench.tick(after: .milliseconds(100))
    #expect(try Contract.send(&bench, 180..<190, payload: 10) == [Reports.report(highest: 190, [(10, 10)])])
  }

  @Test func aLateOperationAfterItsWindowCommittedProvesTheReportSpurious() throws {
    // [P-REP-5]
    var bench = try Contract.prepared()
    #expect(try bench.controlBytes([0x08, 0x03, 0, 0, 0]) == [[0x60, 0x08, 0x00, 0x03, 0, 0, 0]])
    func raw(_ range: Range<Int>) throws -> [[UInt8]] {
      try bench.data(Contract.le32(UInt32(range.lowerBound)) + [0x00] + Contract.image[range])
    }
    #expect(try bench.controlBytes(Contract.window(0, 1800, Contract.crc(0..<1800))).isEmpty)
    _ = try raw(0..<100)
    for start in stride(from: 200, to: 1700, by: 100) { _ = try raw(start..<start + 100) }
    _ = try bench.tick(after: .milliseconds(100))
    #expect(try raw(1700..<1800) == [Reports.report(highest: 1800, [(100, 100)])])
    // The resend completes the WINDOW: committed. Then the original arrives, below it.
    #expect(try raw(100..<200) == [Contract.windowAnswer(0x00, 1800)])
    let dropped = bench.host.engine.statistics.chunksDropped
    #expect(try raw(100..<200).isEmpty)
    #expect(bench.host.engine.statistics.spuriousReports == 1)
    #expect(bench.host.engine.statistics.chunksDropped == dropped)
  }
}
