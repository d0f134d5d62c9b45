extension PushReport {
  /// What became of the activation when the device kept it or refused it (a result line's
  /// `activation`; absent when the push activated at once or was told not to):
  ///
  ///     {"result": "deferred", "kept": true, "hold": "locked", "askAgainAfter": 60}
  ///     {"result": "scheduled", "kept": true, "notBefore": "2026-11-30T02:00:00Z",
  ///      "notAfter": "2026-11-30T04:00:00Z", "permanent": false}
  ///     {"result": "declined", "kept": false}
  public struct Activation: Codable, Equatable, Sendable {
    /// "deferred" (ACTIVATE answered 0x0E), "scheduled" (SCHEDULE answered success) or
    /// "declined" (0x0F: the device dropped the image).
    public let result: String
    /// The device keeps the activation and carries it out on its own once nothing holds it.
    public let kept: Bool
    /// What holds it: "locked", "awaitingConsent", "postponed", "beforeWindow" (deferred only).
    public let hold: String?
    /// Seconds from the answer after which to ask again; 0: the device cannot say (deferred only).
    public let askAgainAfter: Int?
    /// The window, ISO 8601 in UTC (scheduled only; `notAfter` absent: no end).
    public let notBefore: String?
    public let notAfter: String?
    /// Activated for good, without a trial boot (scheduled only).
    public let permanent: Bool?

    public init(
      result: String, kept: Bool, hold: String? = nil, askAgainAfter: Int? = nil, notBefore: String? = nil,
      notAfter: String? = nil, permanent: Bool? = nil
    ) {
      self.result = result
      self.kept = kept
      self.hold = hold
      self.askAgainAfter = askAgainAfter
      self.notBefore = notBefore
      self.notAfter = notAfter
      self.permanent = permanent
    }
  }
}
