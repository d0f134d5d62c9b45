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
