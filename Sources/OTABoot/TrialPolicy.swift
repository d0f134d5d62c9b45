/// How a trial proves itself on the device.
public struct TrialPolicy: Equatable, Sendable {
  /// A command run against the new firmware (with /bin/sh -c); exit 0 marks it good. Without one, a
  /// trial is good once the daemon runs on it, unless `manual`.
  public var healthCheck: String?
  /// Without a health check, wait for `otad mark-good` or CONFIRM from the central instead of
  /// confirming when the daemon comes up.
  public var manual: Bool
  public var healthTimeout: Duration
  /// A trial nobody confirms by then is restarted (that boot counts as a failed attempt); when its
  /// attempts are spent it rolls back ("did not start"). Nil: wait for ever.
  public var confirmTimeout: Duration?

  public init(
    healthCheck: String? = nil, manual: Bool = false, healthTimeout: Duration = .seconds(60),
    confirmTimeout: Duration? = nil
  ) {
    self.healthCheck = healthCheck
    self.manual = manual
    self.healthTimeout = healthTimeout
    self.confirmTimeout = confirmTimeout
  }
}
