import Foundation
import OTACentral
import OTASender
import OTATestSupport
import OTAWire
import Testing

/// One list of exit codes for every otactl command, documented once: docs/OTACTL.md's table has a
/// row for each `OtactlExitCode` and for nothing else (`--help` prints the same list: ProcessTests).
@Suite struct OtactlExitCodeTests {
  static func documentedCodes() throws -> [Int32] {
    let root = RepositoryRoot.url
    let doc = try String(contentsOf: root.appendingPathComponent("docs/OTACTL.md"), encoding: .utf8)
    let table = doc.components(separatedBy: "## Exit codes").dropFirst().first ?? ""
    return table.split(separator: "\n").filter { $0.hasPrefix("| ") }.compactMap { row in
      Int32(row.split(separator: "|").first?.trimmingCharacters(in: .whitespaces) ?? "")
    }
  }

  @Test func theDocsTableHasARowForEachStatusAndNoOther() throws {
    #expect(try Self.documentedCodes() == OtactlExitCode.allCases.map(\.rawValue))
  }

  @Test func everyPushFailureHasItsOwnStatusAndNoneIsSuccessOrUsage() {
    let failures: [PushFailure] = [
      .unreachable(attempts: 1, lastReason: "x"), .tooLarge(size: 2, capacity: 1),
      .windowRetriesExhausted(offset: 0, status: .crcMismatch, attempts: 8),
      .windowRetriesExhausted(offset: 0, status: .storageError, attempts: 8),
      .validationFailed(.validationFailed), .validationFailed(.signatureInvalid),
      .validationFailed(.downgradeRefused), .timedOut(.validating), .refused(.prepare, .invalidState),
      .protocolError("x"), .deviceBusy(attempts: 9, waited: .seconds(11)), .validationFailed(.cannotDecrypt),
      .declined, .schedulingUnsupported,
    ]
    let statuses = failures.map(\.exitStatus)
    #expect(!statuses.contains(.success) && !statuses.contains(.usage))
    #expect(
      statuses == [
        .unreachable, .tooLarge, .transferFailed, .storageFailed, .validationFailed, .signatureInvalid,
        .downgradeRefused, .timedOut, .refused, .refused, .refused, .cannotDecrypt, .declined, .refused,
      ])
  }
}

extension OtactlExitCodeTests {
  /// A device busy with another central is not "not reachable … in range": the message says busy
  /// and what to do, and the code is the one for a device that answers PREPARE busy.
  @Test func aBusyDeviceIsExplainedAsBusy() {
    let failure = PushFailure.deviceBusy(attempts: 8, waited: .milliseconds(11_300))
    #expect(failure.exitStatus == PushFailure.refused(.prepare, .busy).exitStatus)
    #expect(
      failure.explanation
        == "device busy with another central: 8 connection attempts failed, refused as busy for the last "
        + "11.3 s. It serves one central at a time: try again when the other one is done (a push resumes "
        + "where it stopped).")
  }
}

extension OtactlExitCodeTests {
  /// A deferred activation is neither success nor a failure of the transfer: its own code; a
  /// scheduled one did what was asked, as --no-activate does.
  @Test func aKeptActivationHasItsOwnCodeUnlessItWasScheduled() {
    // [P-HOLD-1]
    let deferred = ActivationKept.deferred(ActivationDeferral(reason: .locked, askAgainAfter: 60))
    #expect(deferred.exitStatus == .activationKept && deferred.exitCode == 16)
    let scheduled = ActivationKept.scheduled(ActivationWindow(notBefore: 1, notAfter: nil, permanent: false))
    #expect(scheduled.exitStatus == .success)
    #expect(PushFailure.declined.exitCode == 17)
  }
}
