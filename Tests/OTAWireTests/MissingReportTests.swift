import OTAWire
import Testing

@Suite struct MissingReportTests {
  @Test func layoutIsMarkerHighestThenOffsetAndLength() throws {
    // [P-MISS-1]
    let report = MissingReport(highestStored: 0x0001_0000, ranges: [200..<440, 0x1_0000 - 16..<0x1_0000])
    #expect(
      report.encoded == [0x61, 0x00, 0x00, 0x01, 0x00] + [200, 0, 0, 0, 240, 0] + [0xF0, 0xFF, 0, 0, 16, 0])
    #expect(try MissingReport(bytes: report.encoded) == report)
  }

  @Test func twoRangesFitTheMinimumMTUsTwentyBytes() {
    // [P-INT-2] [P-MISS-2]
    #expect(MissingReport.capacity(mtu: 23) == 2)
    let report = MissingReport(highestStored: 9, ranges: [0..<1, 2..<3])
    #expect(report.encoded.count <= 20)
    #expect(MissingReport.capacity(mtu: 247) == MissingReport.maxRanges)
    for mtu: ATTMTU in [23, 24, 50, 185, 247, 517] {
      let full = MissingReport(
        highestStored: 0, ranges: Array(repeating: 0..<1, count: MissingReport.capacity(mtu: mtu)))
      #expect(full.encoded.count <= mtu.maxNotifyValue, "MTU \(mtu)")
    }
  }

  @Test func longGapsAreSplitAndTheCountIsBounded() {
    // [P-MISS-1]
    let split = MissingReport.reportable([0..<70_000, 80_000..<80_010], limit: 16)
    #expect(split == [0..<65_535, 65_535..<70_000, 80_000..<80_010])
    #expect(MissingReport.reportable([0..<70_000, 80_000..<80_010], limit: 1) == [0..<65_535])
  }

  @Test func malformedReportsThrow() {
    #expect(throws: WireError.self) { try MissingReport(bytes: [0x60, 0, 0, 0, 0]) }
    #expect(throws: WireError.self) { try MissingReport(bytes: [0x61, 0, 0, 0]) }
    #expect(throws: WireError.self) { try MissingReport(bytes: [0x61, 0, 0, 0, 0, 1, 0, 0, 0, 0]) }
    // A zero-length range names nothing.
    #expect(throws: WireError.self) { try MissingReport(bytes: [0x61, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]) }
  }

  @Test func featuresRequestAndAnswerRoundTrip() throws {
    // [P-RESP-5]
    #expect(Request.features(.missingRanges).encoded == [0x08, 0x01, 0x00, 0x00, 0x00])
    #expect(try Request(bytes: [0x08, 0x01, 0x00, 0x00, 0x00]) == .features(.missingRanges))
    let answer = Response(.features, .success, .features(.missingRanges))
    #expect(answer.encoded == [0x60, 0x08, 0x00, 0x01, 0x00, 0x00, 0x00])
    #expect(try Response(bytes: answer.encoded) == answer)
    #expect(try Response(bytes: [0x60, 0x08, 0x01]) == Response(.features, .unknownOpcode))
  }
}
