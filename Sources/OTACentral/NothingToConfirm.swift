import OTAWire

/// What `otactl confirm` says when Info shows nothing on trial: it sends no CONFIRM (there is
/// nothing for it to keep) and says what the device runs instead. Documented in docs/OTACTL.md.
public struct NothingToConfirm: Equatable, Sendable {
  public let message: String
  /// Success when the running version is confirmed and no update was rolled back since; rolled
  /// back when the last update rolled back (the trial one would confirm is gone), as for a push.
  public let exitStatus: OtactlExitCode
  public var exitCode: Int32 { exitStatus.rawValue }

  /// Nil when something runs on trial, or the device runs on a boot state rebuilt from evidence
  /// (Info bit 3), which a paired central confirms: then CONFIRM is what to send.
  public init?(_ info: InfoRecord) {
    guard !info.flags.contains(.runningOnTrial), !info.flags.contains(.bootStateRebuilt) else { return nil }
    let running = "the device runs \(info.runningVersion) from slot \(info.runningSlot), confirmed"
    let outcome = info.lastOutcome
    if outcome.result == .rolledBack {
      message =
        "nothing to confirm: the last update (\(outcome.from) → \(outcome.to)) rolled back (\(outcome.reason)); "
        + "\(running). Nothing was sent; see the device's logs (otad status), fix the image and push it again."
      exitStatus = .rolledBack
    } else {
      message = "nothing to confirm: no image runs on trial; \(running). Nothing was sent."
      exitStatus = .success
    }
  }
}
