import Logging
import OTABoot
import OTAStorage
import OTATrust
import OTAWire

/// Runs the boot stage and says what it decided, in the log.
public enum BootStageReport {
  /// The decision, and the check of the image that runs (for the health check, so that the image
  /// is read once per start).
  public struct Outcome: Sendable {
    public var decision: BootDecision
    public var image: InstalledImageCheck?
  }

  public static func run(_ control: BootControl, logger: Logger) throws -> Outcome {
    let decision: BootDecision
    do {
      decision = try control.runBootStage()
    } catch {
      logger.critical("boot stage: \(error)")
      throw error
    }
    let state = decision.state
    report(decision.reading, logger: logger)
    var metadata: Logger.Metadata = [
      "row": "\(decision.row.rawValue)", "bootloader": "\(control.backend.name)",
    ]
    if let trial = state.trial {
      metadata["trial"] = "slot \(trial.slot), boot \(trial.attemptsUsed) of \(trial.attemptsAllowed)"
    }
    logger.notice(
      "boot stage: slot \(decision.run) runs firmware \(state[decision.run].version)", metadata: metadata)
    if let why = decision.brokenSeal {
      logger.error(
        """
        rolled back before it booted: firmware \(state.outcome.to) on slot \(state.confirmed.other) \
        \(UpdateOutcome.Reason.sealBroken): \(why); slot \(state.confirmed) runs \(state.outcome.from) again
        """)
    } else if decision.row == .trialExhausted || decision.row == .trialExhaustedStillRunning
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
    return Outcome(decision: decision, image: reportImage(decision.run, state, control, logger: logger))
  }

  /// The running image checked against what was installed: rot is logged as an error.
  public static func reportImage(_ slot: SlotID, _ state: BootState, _ control: BootControl, logger: Logger)
    -> InstalledImageCheck?
  {
    do {
      let check = try control.checkInstalledImage(slot, in: state)
      switch check {
      case .rotten(let why)?:
        logger.error(
          "image check: \(why). Reinstall firmware \(state[slot].version) (push it again) before trusting this device"
        )
      case .unchecked(let why)?: logger.warning("image check: \(why)")
      case .intact(let how)?: logger.info("image check: slot \(slot) intact (\(how))")
      case nil: break
      }
      return check
    } catch {
      logger.error("image check: slot \(slot) could not be read: \(error)")
      return .rotten("slot \(slot) cannot be read: \(error)")
    }
  }

  /// Copies moved aside and a rebuilt state, loudly: each means something destroyed a record.
  public static func report(_ reading: BootStateReading?, logger: Logger) {
    guard let reading else { return }
    for name in reading.movedAside {
      logger.error("boot state: the copy '\(name)' failed its checks; moved aside to '\(name).damaged'")
    }
    guard let recovery = reading.recovery, recovery.basis != .factory else { return }
    logger.critical("boot state rebuilt from evidence: \(recovery.findings.joined(separator: "; "))")
    if !recovery.certain {
      logger.critical(
        """
        updates are refused: the evidence does not say which slot holds the last good image. Slot \
        \(recovery.kept) must prove itself first, as a trial does (its health check; with confirm = \
        "auto" and no health check, otad coming up on it), or be confirmed by a paired central \
        (CONFIRM) or by `otad mark-good`
        """)
    }
  }
}
