import Foundation
import OTAReport
import Testing

/// The lines of a push to several devices: each device's push line with a `device` key in the same
/// object, and a summary line; a reader gets back exactly what was written.
@Suite struct FleetReportTests {
  static func encoded(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
  }

  @Test func aTaggedLineIsThePushLineWithItsDeviceKey() throws {
    let line = #"{"event":"resume","offset":8192}"#
    let report = try JSONDecoder().decode(PushReport.self, from: Data(line.utf8))
    let tagged = try Self.encoded(FleetReport.Tagged(device: "BlueOTA-M1", line: report))
    #expect(tagged == #"{"device":"BlueOTA-M1","event":"resume","offset":8192}"#)
    let back = try JSONDecoder().decode(FleetReport.Tagged.self, from: Data(tagged.utf8))
    #expect(back == FleetReport.Tagged(device: "BlueOTA-M1", line: report))
  }

  @Test func aTaggedLineWithoutItsDeviceIsNoTaggedLine() {
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(FleetReport.Tagged.self, from: Data(#"{"event":"resume","offset":1}"#.utf8))
    }
  }

  @Test func theSummaryCountsWhatWasConfirmedAndKeepsAbsentFiguresAsNull() throws {
    let devices = [
      FleetReport.Device(
        device: "a", ok: true, exitCode: 0, reason: nil, runningVersion: "2.0.0+0", confirmed: true,
        resumedFrom: [0, 8192], seconds: 3, goodput: 50_000, bytesOnAir: 100),
      FleetReport.Device(
        device: "b", ok: false, exitCode: 7, reason: "rolled back", runningVersion: "1.0.0+0",
        confirmed: true,
        resumedFrom: [], seconds: 4, goodput: nil, bytesOnAir: 90),
    ]
    let summary = FleetReport.Summary(
      devices: devices, parallel: 2, seconds: 5, aggregateGoodput: 80_000, aggregateCapacity: nil,
      physicalCeiling: nil)
    #expect(summary.confirmed == 1 && summary.total == 2)
    let text = try Self.encoded(summary)
    #expect(text.contains(#""aggregateCapacity":null"#) && text.contains(#""goodput":null"#), "\(text)")
    #expect(text.contains(#""event":"summary""#))
    #expect(try JSONDecoder().decode(FleetReport.Summary.self, from: Data(text.utf8)) == summary)
  }
}
