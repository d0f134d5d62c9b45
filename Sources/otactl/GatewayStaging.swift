import Foundation
import OTACentral
import OTAGateway
import OTASender
import OTAWire

/// hawkBit's actions that do not install now (docs/FLEET.md, "hawkBit's model and the device's
/// say"): outside a maintenance window and download-only, the image is pushed and validated on the
/// device but not activated; a confirmation stages it and asks the device with ACTIVATE
/// (`GatewayConfirmation.swift`). What the gateway remembers between polls of one run.
final class GatewayHolds {
  /// When the device may be asked again, by controller id and action: what its deferral said.
  var askAgainAt: [String: ContinuousClock.Instant] = [:]
  /// The actions told already (this run) that their image is staged for the window.
  var stagedSaid = Set<String>()

  static func key(_ job: Gateway.Job) -> String { "\(job.facts.controllerId) \(job.actionId)" }
}

extension Gateway {
  /// A job that is not an install, once its artifact is here: the push to stage it, or nothing
  /// (the device proved it holds or runs the image, it asks no consent, or it is not to be asked yet).
  func planStaged(_ job: Job, image: [UInt8], version: Version) -> GatewayPush.Item? {
    let facts = job.facts
    let id = facts.controllerId
    if job.mode == .confirm {
      return planConfirmation(job, image: image, version: version)
    }
    // As for an install: the running image proves it, or this gateway's own push of the action.
    let ownPush = journal.action(on: id) == job.actionId
    if facts.runningVersion == version, facts.confirmed, facts.provesItRuns(image) || ownPush {
      let proof =
        facts.provesItRuns(image)
        ? "its running image is the artifact's (size and CRC32)"
        : "after this gateway's push of action \(job.actionId)"
      logger.info("\(id): already runs \(version), confirmed, \(proof)")
      close(job, success: true, ["runs \(version), confirmed; \(proof)"])
      return nil
    }
    if facts.holdsStaged(image, version: version) {
      // A restart of the gateway, or an earlier poll: the device's Info proves the image is there.
      staged(
        job, version,
        detail:
          "found validated on the device (its transfer's size, CRC32 and version are the artifact's image's): not pushed again"
      )
      return nil
    }
    return began(job, image: image, version: version)
  }

  /// The journal says this gateway began the action on the device; the push to make.
  func began(_ job: Job, image: [UInt8], version: Version) -> GatewayPush.Item? {
    let id = job.facts.controllerId
    let ownPush = journal.action(on: id) == job.actionId
    do {
      try journal.began(job.actionId, on: id)
    } catch {
      logger.error("\(id): the gateway's journal cannot be written (\(error)); not pushed")
      return nil
    }
    return GatewayPush.Item(job: job, image: image, version: version, ownPush: ownPush)
  }

  /// The image of `version` is staged on the job's device: outside the window, said once per action
  /// (the action stays open); download-only, the action is closed as downloaded.
  func staged(_ job: Job, _ version: Version, detail: String, wait: Bool = true) {
    let id = job.facts.controllerId
    switch job.mode {
    case .stageForWindow:
      guard holds.stagedSaid.insert(GatewayHolds.key(job)).inserted else { return }
      logger.info("\(id): action \(job.actionId): \(version) \(DDIFeedback.waitingForWindow) (\(detail))")
      feedback.progress(.stagedForWindow(version), on: job.link, for: id)
      if wait { feedback.drain() }
    case .downloadOnly:
      logger.info("\(id): action \(job.actionId): \(version) staged (download only): \(detail)")
      close(job, .downloaded(version, detail), success: true, wait: wait)
    case .install, .confirm, .notYet:
      return
    }
  }
}

extension GatewayPush {
  /// A staging push ended (outside its window, or download-only): staged, already there, failed or
  /// left open.
  func endedStaged(_ item: Item, _ ending: FleetPush.Ending, gateway: Gateway) {
    let id = item.job.facts.controllerId
    guard let outcome = counted(item, ending, gateway: gateway, retry: "tried again next poll") else {
      return
    }
    let report = outcome.report
    switch outcome {
    case .succeeded where report.joinedTrial || report.alreadyRunning:
      // The device was on trial of the version (or runs it): not staged, running.
      if item.ownPush || proves(item, report.deviceAfter) {
        gateway.close(item.job, success: true, ["runs \(item.version), confirmed"], wait: false)
      } else {
        gateway.logger.warning(
          "\(id): runs \(item.version), but its running image is not the artifact's: left open")
      }
    case .succeeded:
      gateway.staged(item.job, item.version, detail: "\(report.bytesOnAir) bytes on air", wait: false)
    case .activationKept(let kept, _):
      gateway.logger.warning("\(id): \(item.version) left open: \(kept.explanation)")
    case .failed(let failure, _):
      let reason = failure.explanation(device: report.deviceBefore)
      gateway.logger.error("\(id): staging \(item.version) failed: \(reason)")
      switch failure {
      case .unreachable, .deviceBusy, .timedOut(.connecting):
        gateway.logger.warning("\(id): left open, tried again next poll")
      default:
        gateway.close(item.job, success: false, [reason], wait: false)
      }
    }
  }
}

extension GatewayPush {
  /// A staging or confirming push's outcome, its bytes counted and what the device said learnt;
  /// nil, said and learnt as nothing, when the device was not reached (`retry` says what happens next).
  func counted(_ item: Item, _ ending: FleetPush.Ending, gateway: Gateway, retry: String) -> SenderOutcome? {
    guard case .finished(let outcome) = ending else {
      gateway.logger.warning("\(item.job.facts.controllerId): not reached (\(retry))")
      gateway.learnt(nil, for: item.job)
      return nil
    }
    totals.bytesOnAir += Int(outcome.report.bytesOnAir)
    totals.pushes += 1
    gateway.learnt(outcome.report.deviceAfter, for: item.job)
    return outcome
  }
}
