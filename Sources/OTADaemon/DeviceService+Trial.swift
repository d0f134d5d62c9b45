import Logging
import OTABoot
import OTAEngine
import OTALink
import OTANordicDFU
import OTAReceiverHost
import OTASMP
import OTASMPServer
import OTAStorage
import OTASystem
import OTAWire

/// The trial in the daemon's loop: the supervisor's steps carried out (the health check, the
/// verdicts, the restarts), and what ends a trial some other way (a confirmation, `otad mark-good`
/// or `mark-bad`, a seal found broken).
extension DeviceService {
  // MARK: The trial

  /// Feeds the trial supervisor and carries out what it asks; true when the device must restart.
  func supervise(_ event: (inout TrialSupervisor) -> [TrialSupervisor.Action]) throws -> Bool {
    guard var supervisor = trial else { return false }
    let actions = event(&supervisor)
    trial = supervisor
    return try carryOut(actions)
  }

  func carryOut(_ actions: [TrialSupervisor.Action]) throws -> Bool {
    for action in actions {
      switch action {
      case .startHealthCheck:
        let command = trial?.policy.healthCheck ?? "false"
        logger.notice("running the health check", metadata: ["command": "\(command)"])
        do {
          healthCheck = try HealthCheckProcess(command: command, environment: healthEnvironment)
        } catch {
          logger.error("the health check could not start: \(error)")
          if try supervise({ $0.healthCheckEnded(passed: false, "\(error)") }) { return true }
        }
      case .stopHealthCheck:
        healthCheck?.kill()
        healthCheck = nil
      case .markGood where trial?.subject == .rebuiltState:
        try host.confirmProvisional()
        trial = nil
        logger.notice(
          "slot \(host.running) proved itself: the rebuilt boot state is confirmed and saved; updates go on")
        observe(.verdict("rebuilt boot state confirmed: slot \(host.running) proved itself"))
      case .stayProvisional(let why):
        if let other = try host.abandonProvisional() {
          restartReason =
            "slot \(host.running) did not prove itself (\(why)): trying slot \(other), which holds a verified image"
          logger.error("\(restartReason)")
          observe(
            .verdict("rebuilt boot state: slot \(host.running) did not prove itself; trying slot \(other)"))
          observe(.restart(reason: restartReason))
          link.disconnect()
          return true
        }
        logger.critical(
          """
          slot \(host.running) did not prove itself (\(why)), and the other slot holds no image that has \
          not failed too: the rebuilt boot state stays provisional and updates are refused until a \
          paired central confirms it (CONFIRM) or `otad mark-good` runs
          """)
        observe(.verdict("rebuilt boot state still provisional: \(why)"))
      case .markGood:
        if try host.markGood() != nil, restartIfRunningMarkedBad() { return true }
        trial = nil
        let outcome = host.boot.outcome
        logger.notice(
          "firmware \(outcome.to) confirmed after \(outcome.attemptsUsed) boot(s): slot \(host.running) is good"
        )
        observe(.verdict("firmware \(outcome.to) confirmed after \(outcome.attemptsUsed) boot(s)"))
      case .failBoot(let reason):
        try host.failTrialBoot(reason)
        observe(
          .verdict(
            host.boot.trial.map { "failed boot (\(reason)), \($0.attemptsLeft) left" }
              ?? "marked bad (\(reason)): rolling back to slot \(host.boot.confirmed)"))
        if let trial = host.boot.trial {
          logger.error(
            "firmware on slot \(host.running): \(reason); \(trial.attemptsLeft) trial boot(s) left")
        } else {
          logger.error(
            "firmware on slot \(host.running) marked bad (\(reason)): rolling back to slot \(host.boot.confirmed)"
          )
        }
      case .restart(let why):
        restartReason = why
        logger.notice("restarting: \(why)")
        observe(.restart(reason: why))
        link.disconnect()
        return true
      }
    }
    return false
  }

  /// What the supervisor waits for has happened some other way (CONFIRM, `otad mark-good`).
  func confirmedElsewhere(_ supervisor: TrialSupervisor) -> Bool {
    supervisor.subject == .trial ? !host.runningOnTrial && !host.runningMarkedBad : !host.boot.provisional
  }

  /// A confirmation found the running trial's seal broken (its slot no longer holds the bytes its
  /// activation checked): it was marked bad instead, and the device restarts into the confirmed
  /// slot. True when the device must restart.
  func restartIfRunningMarkedBad() -> Bool {
    guard host.runningMarkedBad, host.running != host.boot.confirmed else { return false }
    healthCheck?.kill()
    healthCheck = nil
    trial = nil
    restartReason =
      "slot \(host.running) was marked bad (\(host.boot.outcome.reason)): rolling back to slot \(host.boot.confirmed)"
    logger.error("\(restartReason)")
    observe(.verdict("marked bad (\(host.boot.outcome.reason)): rolling back to slot \(host.boot.confirmed)"))
    observe(.restart(reason: restartReason))
    link.disconnect()
    return true
  }

  /// SIGHUP: `otad mark-good` or `mark-bad` changed the boot state.
  func reload() throws -> Bool {
    logger.info("reloading the boot state")
    let keep = try host.reloadBootState()
    if let supervisor = trial, confirmedElsewhere(supervisor) {
      _ = try supervise { $0.confirmed() }
      trial = nil
    }
    guard keep else {
      restartReason = "slot \(host.running) was marked bad"
      logger.notice("restarting: \(restartReason)")
      observe(.restart(reason: restartReason))
      link.disconnect()
      return true
    }
    return false
  }

  /// Returns true when the device must restart.
}
