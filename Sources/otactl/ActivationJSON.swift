import OTACentral
import OTAReport
import OTASender
import OTAWire

extension PushReport.Activation {
  /// A result line's `activation` for an outcome that has one: a kept activation, or a declined one.
  init?(_ outcome: SenderOutcome) {
    switch outcome {
    case .activationKept(.deferred(let deferral), _):
      self.init(
        result: "deferred", kept: true, hold: deferral.reason.name, askAgainAfter: Int(deferral.askAgainAfter)
      )
    case .activationKept(.scheduled(let window), _):
      self.init(scheduled: window)
    case .failed(.declined, _):
      self.init(result: "declined", kept: false)
    case .succeeded, .failed:
      return nil
    }
  }

  init(scheduled window: ActivationWindow) {
    self.init(
      result: "scheduled", kept: true, notBefore: CivilTime.iso8601(Int64(window.notBefore)),
      notAfter: window.notAfter.map { CivilTime.iso8601(Int64($0)) }, permanent: window.permanent)
  }
}

/// Info's kept activation (offset 100 on, features bit 5) in `otactl info --json`: null when the
/// device keeps none.
struct KeptActivationJSON: Encodable {
  /// "trial" or "permanent".
  let kind: String
  /// What holds it: "none" (it goes ahead within a second), "locked", "awaitingConsent",
  /// "postponed", "beforeWindow".
  let hold: String
  /// ISO 8601 in UTC; null: at once (notBefore), no end (notAfter).
  let notBefore: Nullable<String>
  let notAfter: Nullable<String>
  /// Seconds; 0: the device cannot say.
  let askAgainAfter: Int

  init?(_ kept: KeptActivation) {
    guard kept.kind != .none else { return nil }
    kind = kept.kind == .permanent ? "permanent" : "trial"
    hold = kept.hold.name
    notBefore = Nullable(kept.notBefore == 0 ? nil : CivilTime.iso8601(Int64(kept.notBefore)))
    notAfter = Nullable(kept.notAfter.map { CivilTime.iso8601(Int64($0)) })
    askAgainAfter = Int(kept.askAgainAfter)
  }
}

extension KeptActivation {
  /// `otactl info`'s line: "a trial activation, held by an update lock, between … ; ask again in 60 s".
  var summary: String {
    let kind = kind == .permanent ? "a permanent activation (no trial boot)" : "an activation (a trial boot)"
    let held = hold == .none ? "nothing holds it (it goes ahead within a second)" : "held: \(hold)"
    let window: String
    switch (notBefore, notAfter) {
    case (0, nil): window = ""
    case (_, nil): window = ", from \(CivilTime.iso8601(Int64(notBefore))) on"
    case (let start, let end?):
      window =
        ", between \(start == 0 ? "now" : CivilTime.iso8601(Int64(start))) and \(CivilTime.iso8601(Int64(end)))"
    }
    let again = askAgainAfter > 0 ? "; ask again in \(askAgainAfter) s" : ""
    return "\(kind), \(held)\(window)\(again)"
  }
}

typealias PushReportActivation = PushReport.Activation

/// `otactl activate --json`: what the device answered, as one document.
struct ActivateJSON: Encodable {
  let request = "activate"
  let ok: Bool
  /// "activated", "scheduled", "deferred", "declined" or "refused".
  let result: String
  let exitCode: Int
  let message: String
  /// As in a push's result line: the kept (or declined) activation.
  let activation: PushReport.Activation?
  /// After an activation waited for: the version the device runs.
  let runningVersion: String?
}
