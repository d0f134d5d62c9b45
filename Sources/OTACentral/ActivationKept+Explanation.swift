import OTASender
import OTAWire

/// What `otactl` says when the device keeps the activation, and the exit code it uses.
/// Documented in docs/OTACTL.md.
extension ActivationKept {
  /// A scheduled activation is what was asked for (as `--no-activate` is): success. A deferred one
  /// is not: the image is validated and kept, not activated yet.
  public var exitStatus: OtactlExitCode {
    switch self {
    case .deferred: .activationKept
    case .scheduled: .success
    }
  }

  public var exitCode: Int32 { exitStatus.rawValue }

  /// "deferred: an update lock, ask again in 60 s; …" or "scheduled: the device activates it between …".
  public var explanation: String {
    switch self {
    case .deferred(let deferral):
      "deferred: \(deferral.reason), "
        + (deferral.askAgainAfter > 0
          ? "ask again in \(deferral.askAgainAfter) s" : "the device cannot say when to ask again")
        + "; the device keeps the activation and carries it out itself once nothing holds it. The image is "
        + "validated on the device (otactl info shows the kept activation; otactl activate asks again)."
    case .scheduled(let window):
      "scheduled: the device activates it "
        + Self.describe(window)
        + " by its own clock, once nothing holds it (an update lock, consent); the image is validated on "
        + "the device and otactl info shows the kept activation."
    }
  }

  /// "between 2026-11-30T02:00:00Z and 2026-11-30T04:00:00Z", "from … on", with "for good" when permanent.
  public static func describe(_ window: ActivationWindow) -> String {
    let from = CivilTime.iso8601(Int64(window.notBefore))
    let span =
      window.notAfter.map { "between \(from) and \(CivilTime.iso8601(Int64($0)))" } ?? "from \(from) on"
    return span + (window.permanent ? " (for good, without a trial boot)" : "")
  }
}

extension ActivationHoldReason {
  /// The name otactl's JSON gives it: `locked`, `awaitingConsent`, `postponed`, `beforeWindow`,
  /// `none`.
  public var name: String {
    switch self {
    case .none: "none"
    case .locked: "locked"
    case .awaitingConsent: "awaitingConsent"
    case .postponed: "postponed"
    case .beforeWindow: "beforeWindow"
    }
  }
}
