import OTABoot
import OTAWire

/// The daemon's part of a trial, as a pure state machine: start the health check, turn its verdict
/// (or its silence) into mark-good or mark-bad and a restart, and keep the confirmation deadline.
/// Time comes in with the events; the daemon carries out the actions.
///
/// A boot state rebuilt from evidence that does not say which slot holds the last good image
/// (provisional) is supervised the same way: the slot it keeps, which runs, proves itself as a trial
/// would, so a device with no one at its console can take updates again. A failure there changes
/// nothing (there is no known-good slot to roll back to): the state stays provisional.
public struct TrialSupervisor: Equatable, Sendable {
  /// What must prove itself.
  public enum Subject: Equatable, Sendable {
    /// A slot on trial: a failure is a failed boot and a restart.
    case trial
    /// The running slot of a provisional rebuilt boot state: a failure leaves it provisional.
    case rebuiltState
  }

  public enum Action: Equatable, Sendable {
    case startHealthCheck
    case stopHealthCheck
    case markGood
    /// This boot of the trial failed: another boot tries again, or, with none left, it is marked bad.
    case failBoot(UpdateOutcome.Reason)
    /// Restart the device: into another trial boot, or into the confirmed slot after a rollback.
    case restart(String)
    /// The running slot of a provisional state did not prove itself: it stays provisional.
    case stayProvisional(String)
  }

  public let policy: TrialPolicy
  public let subject: Subject
  public private(set) var healthDeadline: Duration?
  public private(set) var confirmDeadline: Duration?
  public private(set) var finished = false

  public init(policy: TrialPolicy, subject: Subject = .trial) {
    self.policy = policy
    self.subject = subject
  }

  public var nextDeadline: Duration? { [healthDeadline, confirmDeadline].compactMap { $0 }.min() }

  /// The daemon came up running a slot on trial.
  public mutating func start(now: Duration) -> [Action] {
    if policy.healthCheck != nil {
      healthDeadline = now + policy.healthTimeout
      return [.startHealthCheck]
    }
    guard policy.manual else {
      finished = true
      return [.markGood]
    }
    // A provisional state has nothing to fall back to: it waits for its confirmation without end.
    confirmDeadline = subject == .trial ? policy.confirmTimeout.map { now + $0 } : nil
    return []
  }

  /// The health check ended (or could not start: `passed` false).
  public mutating func healthCheckEnded(passed: Bool, _ how: String) -> [Action] {
    guard healthDeadline != nil, !finished else { return [] }
    healthDeadline = nil
    finished = true
    if passed { return [.markGood] }
    if subject == .rebuiltState { return [.stayProvisional("the health check failed (\(how))")] }
    return [.failBoot(.healthCheckFailed), .restart("the health check failed (\(how))")]
  }

  /// A fault failed this trial's health check (docs/APP-TESTING.md), whether or not one is
  /// configured: a failed boot and a restart, as when the check fails.
  public mutating func failedByFault(_ how: String) -> [Action] {
    finished = true
    return [.failBoot(.healthCheckFailed), .restart("the health check failed (\(how))")]
  }

  /// The trial was confirmed some other way (CONFIRM, `otad mark-good`).
  public mutating func confirmed() -> [Action] {
    guard !finished else { return [] }
    finished = true
    confirmDeadline = nil
    if healthDeadline != nil {
      healthDeadline = nil
      return [.stopHealthCheck]
    }
    return []
  }

  public mutating func tick(now: Duration) -> [Action] {
    guard !finished else { return [] }
    if let due = healthDeadline, now >= due {
      healthDeadline = nil
      finished = true
      if subject == .rebuiltState {
        return [
          .stopHealthCheck,
          .stayProvisional("the health check did not finish within \(policy.healthTimeout)"),
        ]
      }
      return [
        .stopHealthCheck, .failBoot(.healthCheckTimedOut),
        .restart("the health check did not finish within \(policy.healthTimeout)"),
      ]
    }
    if let due = confirmDeadline, now >= due {
      confirmDeadline = nil
      finished = true
      return [
        .failBoot(.didNotStart),
        .restart(
          "nobody confirmed the trial within \(policy.confirmTimeout.map { "\($0)" } ?? "its timeout")"),
      ]
    }
    return []
  }
}
