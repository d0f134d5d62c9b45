import OTAGateway

/// hawkBit's user consent flow: the action waiting for confirmation, and the target's answer.
extension DDIClient {
  /// The action a `confirmationBase` link names, or nil when it no longer waits for confirmation
  /// (hawkBit answers 404 once the action was confirmed, denied or cancelled).
  public func confirmation(_ link: DDILink, for controllerId: String) throws(DDIError)
    -> DDIConfirmationBaseAction?
  {
    let answer: (url: String, body: [UInt8])
    do throws(DDIError) {
      answer = try get(try own(link.href), controllerId)
    } catch {
      if error.isNotFound { return nil }
      throw error
    }
    return try json(DDIConfirmationBaseAction.self, "a DDI confirmation base", answer)
  }

  /// `confirmed` or `denied` on the action the `confirmationBase` link names.
  public func confirm(_ answer: DDIConfirmationFeedback, on link: DDILink, for controllerId: String)
    throws(DDIError)
  {
    let base = try own(link.href)
    let path = base.split(separator: "?", maxSplits: 1)[0]
    try send("POST", "\(path)/feedback", controllerId, body: answer)
  }
}
