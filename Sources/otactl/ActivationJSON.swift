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
