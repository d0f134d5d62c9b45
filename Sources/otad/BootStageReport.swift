import Logging
import OTADevice
import OTAStorage

/// Runs the boot stage and says what it decided, in the log.
enum BootStageReport {
  static func run(_ control: BootControl, logger: Logger) throws -> BootDecision {
    let decision: BootDecision
    do {
      decision = try control.runBootStage()
    } catch {
      logger.critical("boot stage: \(error)")
      throw error
    }
    let state = decision.state
    var metadata: Logger.Metadata = [
      "row": "\(decision.row.rawValue)", "bootloader": "\(control.backend.name)",
    ]
    if let trial = state.trial {
      metadata["trial"] = "slot \(trial.slot), boot \(trial.attemptsUsed) of \(trial.attemptsAllowed)"
    }
    logger.notice(
      "boot stage: slot \(decision.run) runs firmware \(state[decision.run].version)", metadata: metadata)
    if decision.row == .trialExhausted || decision.row == .trialExhaustedStillRunning
      || decision.row == .bootloaderFellBack
    {
      let outcome = state.outcome
      logger.error(
        """
        rolled back: firmware \(outcome.to) \(outcome.reason) after \(outcome.attemptsUsed) boot(s); \
        slot \(state.confirmed) runs \(outcome.from) again
        """)
    }
    if decision.restart { logger.notice("boot stage: restarting into \(state.plan)") }
    return decision
  }
}
