import OTAReport
import OTAWire

/// An update's outcome as Info reports it (`otactl info --json`).
struct OutcomeJSON: Encodable {
  let result: String
  let from: String
  let to: String
  let reason: String
  let attemptsUsed: Int

  init(_ outcome: UpdateOutcome) {
    result = "\(outcome.result)"
    from = "\(outcome.from)"
    to = "\(outcome.to)"
    reason = "\(outcome.reason)"
    attemptsUsed = Int(outcome.attemptsUsed)
  }
}

extension PushReport.Outcome {
  /// The same fields as `OutcomeJSON`, in a failed push's result line.
  init(_ outcome: UpdateOutcome) {
    self.init(
      result: "\(outcome.result)", from: "\(outcome.from)", to: "\(outcome.to)", reason: "\(outcome.reason)",
      attemptsUsed: Int(outcome.attemptsUsed))
  }
}
