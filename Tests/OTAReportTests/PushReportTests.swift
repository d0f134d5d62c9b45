import Foundation
import OTAReport
import Testing

/// otactl writes `PushReport` and ota-lab reads it: lines otactl wrote (over the simulated link, before
/// the type existed) decode into it and encode back byte for byte, keys sorted as otactl writes them.
@Suite struct PushReportTests {
  static let lines = [
    #"{"event":"start","image":"Images/firmware-v2.bin","link":"mtu=247,interval=15ms,packets=6,phy=2M,dle=on,queue=16","size":41686,"version":"2.0.0+0"}"#,
    #"{"event":"phase","phase":"connecting","t":0.001391116}"#,
    #"{"bytesOnAir":4292,"committed":4096,"event":"progress","t":0.454703081,"total":4651}"#,
    #"{"event":"resume","offset":8192}"#,
    #"{"alreadyRunning":false,"attMTU":247,"blockHashRequests":1,"blockHashesRead":11,"blockSize":4096,"bytesOnAir":42422,"bytesResent":0,"bytesSent":41686,"ceilingRatio":0.04902020816190987,"chunksResent":0,"confirmed":true,"dataPath":"gatt","dryRun":false,"event":"result","goodput":8088.334346715129,"joinedTrial":false,"missingReports":0,"mtu":247,"ok":true,"physicalCeiling":165000,"plainBytesOnAir":42382,"plannedBytesOnAir":42443,"ratio":0.08287227814257304,"rawCapacity":97600,"reconnects":0,"resumedFrom":[],"runningSlot":"B","runningVersion":"2.0.0+0","seconds":5.153842338,"transferCeilingRatio":0.24657901831854226,"transferGoodput":40685.53802255947,"transferMode":"plain","transferSeconds":1.024590113,"windowFailures":0,"windows":11}"#,
    #"{"error":"signature invalid","event":"result","exitCode":11,"lastOutcome":null,"ok":false,"resumedFrom":[],"seconds":0.617558415}"#,
    #"{"error":"rolled back","event":"result","exitCode":7,"lastOutcome":{"attemptsUsed":2,"from":"1.0.0+0","reason":"healthCheckFailed","result":"rolledBack","to":"2.0.0+0"},"ok":false,"resumedFrom":[0,4096],"seconds":3.5}"#,
    // A deferred activation: the image validated and kept on the device, exit code 16 ([P-HOLD-1]).
    #"{"activation":{"askAgainAfter":60,"hold":"locked","kept":true,"result":"deferred"},"error":"deferred: an update lock, ask again in 60 s","event":"result","exitCode":16,"lastOutcome":null,"ok":false,"resumedFrom":[],"seconds":2.5}"#,
  ]

  static func encoded(_ report: PushReport) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(report), as: UTF8.self)
  }

  @Test(arguments: lines) func decodesAndEncodesBackTheSameLine(_ line: String) throws {
    let report = try JSONDecoder().decode(PushReport.self, from: Data(line.utf8))
    #expect(try Self.encoded(report) == line)
  }

  @Test func eachEventIsItsCase() throws {
    let reports = try Self.lines.map { try JSONDecoder().decode(PushReport.self, from: Data($0.utf8)) }
    guard case .start(let start) = reports[0], case .succeeded(let succeeded) = reports[4],
      case .failed(let failed) = reports[6]
    else {
      Issue.record("\(reports)")
      return
    }
    #expect(start.size == 41686)
    #expect(succeeded.runningVersion.value == "2.0.0+0")
    #expect(succeeded.l2capPSM == nil)
    #expect(failed.exitCode == 7)
    #expect(failed.lastOutcome.value?.attemptsUsed == 2)
  }

  @Test func aLineOfNoKnownEventIsAnError() {
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(PushReport.self, from: Data(#"{"event":"hello"}"#.utf8))
    }
  }

  @Test func aNullIsWrittenWhereTheValueIsAbsent() throws {
    let failed = PushReport.failed(
      .init(exitCode: 3, error: "unreachable", seconds: 1, resumedFrom: [], lastOutcome: .init(nil)))
    #expect(
      try Self.encoded(failed)
        == #"{"error":"unreachable","event":"result","exitCode":3,"lastOutcome":null,"ok":false,"resumedFrom":[],"seconds":1}"#
    )
  }
}

extension PushReportTests {
  /// A scheduled activation rides on the succeeded line; readers from before it ignore the key.
  @Test func aScheduledActivationIsPartOfTheSucceededLine() throws {
    // [P-HOLD-4]
    var line = Self.lines[4]
    line.removeFirst()
    line =
      #"{"activation":{"kept":true,"notAfter":"2026-11-30T04:00:00Z","notBefore":"2026-11-30T02:00:00Z","permanent":false,"result":"scheduled"},"#
      + line
    let report = try JSONDecoder().decode(PushReport.self, from: Data(line.utf8))
    guard case .succeeded(let succeeded) = report else {
      Issue.record("\(report)")
      return
    }
    #expect(succeeded.activation?.notBefore == "2026-11-30T02:00:00Z")
    #expect(try Self.encoded(report) == line)
  }
}
