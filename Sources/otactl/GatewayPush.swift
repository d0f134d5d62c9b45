import Foundation
import OTACentral
import OTAGateway
import OTALink
import OTASender
import OTASocketLink
import OTATrust
import OTAWire

/// The gateway's pushes of one cycle: each device's image over its own `PushSession`, at most
/// `parallel` at a time in one `FleetPush`, progress fed back to the server as it goes (every 10 %,
/// as "proceeding"), and each device's result closed on the server as it ends.
struct GatewayPush {
  struct Item {
    var job: Gateway.Job
    var image: [UInt8]
    var version: Version
    /// The gateway began this action on the device in an earlier cycle or run.
    var ownPush: Bool
  }

  /// What every session is told, by image version and link kind.
  let configuration: (Version, Bool) throws -> SenderConfiguration
  let options: LinkOptions
  let dataPath: DataPath
  let parallel: Int

  /// The figures of every push since the gateway started, for its summary.
  final class Totals {
    var bytesOnAir = 0
    var pushes = 0
  }
  let totals = Totals()

  func run(_ items: [Item], gateway: Gateway) {
    let radio = SharedRadio()
    let origin = ContinuousClock().now
    let logger = gateway.logger
    var lastStep = [Int](repeating: -1, count: items.count)
    var cancelled = Set<Int>()
    let fleet = FleetPush(
      count: items.count, parallel: parallel,
      makeSession: { index in
        let item = items[index]
        let id = item.job.facts.controllerId
        if gateway.cancelledBeforePush(item.job) {
          cancelled.insert(index)
          return .failure(.init("cancelled by the server before its push began"))
        }
        let simulated = LinkOptions.isSimulated(item.job.device)
        let link: any CentralLink
        var sender: SenderConfiguration
        do {
          link = try options.makeLink(to: item.job.device, dataPath: dataPath, linkFacts: true, radio: radio)
          sender = try configuration(item.version, simulated)
        } catch {
          return .failure(.init("\(error)"))
        }
        // Staged, not activated (a closed window, download only); a confirmation's ACTIVATE is the
        // question, and a device that says it runs the version is not pushed again for it.
        sender.activate = item.job.mode.activates
        if item.job.mode == .confirm { sender.force = false }
        let feedsBack = item.job.mode != .confirm
        logger.info(
          "\(id): \(item.job.mode.activates ? "pushing" : "staging") \(item.version) (\(item.image.count) bytes), action \(item.job.actionId)\(item.job.mode == .confirm ? ", to ask for consent" : "")"
        )
        if feedsBack {
          gateway.feedback.progress(
            .proceeding(0, of: 100, "pushing \(item.version) over BLE from the gateway"), on: item.job.link,
            for: id)
        }
        return .success(
          PushSession(
            image: item.image, configuration: sender, blockDigest: { BlockDigest.truncatedSHA256($0) },
            link: link,
            logger: options.logger(), origin: origin,
            onProgress: { progress, _ in
              guard feedsBack, progress.total > 0 else { return }
              let percent = Int(UInt64(progress.committed) * 100 / UInt64(progress.total))
              let step = percent / 10
              guard step > lastStep[index], step < 10 else { return }
              lastStep[index] = step
              gateway.feedback.progress(
                // goosebit shows progress from a detail line "Downloaded N%" (SWUpdate's words).
                .proceeding(
                  percent, of: 100,
                  "Downloaded \(percent)%: \(progress.committed) of \(progress.total) bytes committed on the device"
                ),
                on: item.job.link, for: id)
            }))
      },
      onEnded: { index, ending, session in
        guard !cancelled.contains(index) else { return }
        switch items[index].job.mode {
        case .install: ended(items[index], ending, session, gateway: gateway)
        case .confirm: endedConfirmation(items[index], ending, gateway: gateway)
        case .stageForWindow, .downloadOnly, .notYet: endedStaged(items[index], ending, gateway: gateway)
        }
      })
    fleet.run()
    gateway.feedback.drain()
    logger.info("pushed to \(items.count) device(s), at most \(fleet.peakRunning) at a time")
  }

  /// Whether the device's Info after the push proves it runs the item's image.
  func proves(_ item: Item, _ after: InfoRecord?) -> Bool {
    guard let after else { return false }
    var facts = item.job.facts
    facts.info = after
    return facts.provesItRuns(item.image)
  }

  private func ended(_ item: Item, _ ending: FleetPush.Ending, _ session: PushSession?, gateway: Gateway) {
    let id = item.job.facts.controllerId
    switch ending {
    case .finished(.succeeded(let report)):
      totals.bytesOnAir += Int(report.bytesOnAir)
      totals.pushes += 1
      let after = report.deviceAfter
      let runs = after.map { "\($0.runningVersion)" } ?? "\(item.version)"
      // Where the push went on from a committed offset (a drop, or a push an earlier gateway began).
      let resumes = report.resumedFrom.filter { $0 > 0 }
      let resumed =
        resumes.isEmpty ? "" : ", resumed at byte \(resumes.map { "\($0)" }.joined(separator: ", "))"
      let detail = "runs \(runs), confirmed; \(report.bytesOnAir) bytes on air\(resumed)"
      if report.joinedTrial, !item.ownPush, !proves(item, after) {
        // The device was on trial of the version when the gateway came: someone else's image, or
        // a word. Not this action's result: left open, and the next poll pushes.
        gateway.logger.warning(
          "\(id): it was on trial of \(item.version) before this action, and its running image is not the artifact's (size and CRC32): not reported; pushed next poll"
        )
        gateway.learnt(after, for: item.job)
        return
      }
      gateway.logger.info("\(id): \(detail)")
      gateway.learnt(after, for: item.job)
      gateway.close(item.job, success: true, [detail], wait: false)
    case .finished(.activationKept(let kept, let report)):
      // Validated and kept on the device, which activates on its own: not a failure, not done yet.
      // The action stays open; the next poll asks again (STATUS finds the image validated).
      totals.bytesOnAir += Int(report.bytesOnAir)
      totals.pushes += 1
      gateway.logger.warning("\(id): \(item.version) left open: \(kept.explanation)")
      gateway.learnt(report.deviceAfter, for: item.job)
    case .finished(.failed(let failure, let report)):
      totals.bytesOnAir += Int(report.bytesOnAir)
      totals.pushes += 1
      let reason = failure.explanation(device: report.deviceBefore)
      gateway.logger.error("\(id): \(item.version) failed: \(reason)")
      gateway.learnt(report.deviceAfter, for: item.job)
      // A device that could not be reached has not failed the update: the action stays open and
      // the next poll pushes again, resuming where the device's journal stands.
      switch failure {
      case .unreachable, .deviceBusy, .timedOut(.connecting):
        gateway.logger.warning("\(id): left open, tried again next poll")
      default:
        gateway.close(item.job, success: false, [reason], wait: false)
      }
    case .unreachable(let reason):
      gateway.logger.warning("\(id): not reached (tried again next poll): \(reason)")
      gateway.learnt(nil, for: item.job)
    case .linkFailed(let error):
      gateway.logger.error("\(id): the link failed (tried again next poll): \(error)")
      gateway.learnt(nil, for: item.job)
    }
  }
}
