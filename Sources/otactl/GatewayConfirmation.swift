import Foundation
import OTACentral
import OTAGateway
import OTAGatewayHTTP
import OTASender
import OTAWire

/// hawkBit's confirmation (its user consent flow) answered by the device: the gateway stages the
/// image and asks with ACTIVATE, and the device's answer goes to the server as the confirmation
/// feedback (`ConfirmationDecision`). A device that asks no consent is confirmed on its behalf.
extension Gateway {
  /// The job for an action that waits for confirmation, nil when it no longer does or cannot be read.
  func confirmationJob(_ link: DDILink, device: String, identity: String, facts: TargetFacts) -> Job? {
    let id = facts.controllerId
    do {
      guard let action = try ddi.confirmation(link, for: id) else { return nil }
      return Job(
        device: device, facts: facts, link: link, actionId: action.id, deployment: action.deployment,
        identity: identity, mode: .confirm)
    } catch {
      logger.error("\(id): the action waiting for confirmation could not be read: \(error)")
      return nil
    }
  }

  /// A confirmation job once its artifact is here: confirmed on the device's behalf, answered from
  /// what the device shows, or the push that stages the image and asks.
  func planConfirmation(_ job: Job, image: [UInt8], version: Version) -> GatewayPush.Item? {
    let facts = job.facts
    let id = facts.controllerId
    guard facts.requiresConsent else {
      answer(job, .answer(ConfirmationDecision.onBehalf(of: id)))
      return nil
    }
    if let at = holds.askAgainAt[GatewayHolds.key(job)], ContinuousClock().now < at {
      logger.info("\(id): action \(job.actionId) waits for the device's consent; asked again later")
      return nil
    }
    // This gateway staged the image for this action (its journal): what the device runs now is that.
    let ownPush = journal.action(on: id) == job.actionId
    if facts.runningVersion == version, facts.confirmed, facts.provesItRuns(image) || ownPush {
      // It activated the kept activation on its own (its owner agreed) since it was asked.
      answer(job, ConfirmationDecision.step(for: .activatedOnItsOwn(version)))
      return nil
    }
    return began(job, image: image, version: version)
  }

  /// Sends the confirmation answer, or notes when to ask again.
  func answer(_ job: Job, _ step: ConfirmationDecision.Step) {
    let id = job.facts.controllerId
    switch step {
    case .askAgain(let seconds, let reason):
      holds.askAgainAt[GatewayHolds.key(job)] = ContinuousClock().now + .seconds(Int64(seconds))
      logger.info(
        "\(id): action \(job.actionId): \(reason); nothing sent to the server, asked again at a later poll")
    case .answer(let feedback):
      self.feedback.drain()
      do {
        try ddi.confirm(feedback, on: job.link, for: id)
        // hawkBit keeps a denied action waiting for confirmation: asked again after an hour (its owner
        // may change their mind), not at every poll (the device dropped the image: each ask sends it).
        holds.askAgainAt[GatewayHolds.key(job)] =
          feedback.confirmation == .denied ? ContinuousClock().now + .seconds(3600) : nil
        logger.info(
          "\(id): action \(job.actionId) \(feedback.confirmation.rawValue): \(feedback.details.joined(separator: "; "))"
        )
      } catch {
        logger.error("\(id): the confirmation was not delivered (sent again next poll): \(error)")
      }
    }
  }
}

extension GatewayPush {
  /// The push that staged the image and asked with ACTIVATE ended: the device's answer.
  func endedConfirmation(_ item: Item, _ ending: FleetPush.Ending, gateway: Gateway) {
    let id = item.job.facts.controllerId
    guard let outcome = counted(item, ending, gateway: gateway, retry: "asked again next poll") else {
      return
    }
    let report = outcome.report
    let answer: ConfirmationDecision.DeviceAnswer
    switch outcome {
    case .succeeded:
      // ACTIVATE of this push, this gateway's staging of the action (its journal), or the running
      // image itself proves it: else a device's word that it runs the version is not its consent.
      let activatedNow = !report.alreadyRunning && !report.joinedTrial
      guard activatedNow || item.ownPush || proves(item, report.deviceAfter) else {
        gateway.logger.warning(
          "\(id): runs \(item.version), but its running image is not the artifact's: not taken as its consent"
        )
        return
      }
      answer = activatedNow ? .activated(item.version) : .activatedOnItsOwn(item.version)
    case .activationKept(.deferred(let deferral), _):
      answer = .deferred(deferral)
    case .activationKept(let kept, _):
      gateway.logger.warning("\(id): \(item.version) left open: \(kept.explanation)")
      return
    case .failed(.declined, _):
      answer = .declined
    case .failed(let failure, _):
      let reason = failure.explanation(device: report.deviceBefore)
      switch failure {
      case .validationFailed(let status), .refused(_, let status):
        answer = .refused(status, reason)
      case .tooLarge:
        answer = .refused(.tooLarge, reason)
      case .rolledBack, .wrongVersionAfterRestart, .notConfirmed:
        // The device agreed and activated; the deployment that follows reports the failure (the
        // journal names this gateway's push, and the device's last outcome the rollback).
        answer = .activatedButFailed(item.version, reason)
      default:
        // Not reached, busy, timed out: asked again next poll.
        gateway.logger.error(
          "\(id): asking for consent to \(item.version) failed (asked again next poll): \(reason)")
        return
      }
    }
    gateway.answer(item.job, ConfirmationDecision.step(for: answer))
  }
}
