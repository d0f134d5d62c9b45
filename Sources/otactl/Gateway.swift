import Foundation
import Logging
import OTACentral
import OTAGateway
import OTAGatewayHTTP
import OTAWire
import Synchronization

/// The gateway's work, one poll cycle at a time: each device near it a DDI target named by its own
/// serial, its attributes reported, its deployment's artifact downloaded once for every device that
/// has it, pushed to them at once, and each result reported once.
final class Gateway {
  struct Settings {
    var defaultSleep: Duration
    var sleepBounds: ClosedRange<Duration>
    /// How old a device's facts may grow before the gateway asks the device again (its state may
    /// change without the gateway: a rollback, an update from another central).
    var probeInterval: Duration = .seconds(600)
  }

  /// One device's action in this cycle.
  struct Job {
    var device: String
    var facts: TargetFacts
    var link: DDILink
    var actionId: String
    var deployment: DDIDeploymentBase
  }

  let settings: Settings
  /// The devices near the gateway, found before each cycle.
  var devices: [String] = []
  let ddi: DDIClient
  let cache: ArtifactCache
  let journal: GatewayJournal
  let feedback: GatewayFeedback
  let logger: Logger
  /// Reads a device's Info and identity (a short connection).
  let probe: (_ device: String, _ fallback: Bool) -> Result<TargetFacts, GatewayProbe.Failure>
  /// Reads several devices' Info and identity at once, each answer in the order asked.
  let probeSeveral:
    (_ devices: [(device: String, fallback: Bool)]) -> [Result<TargetFacts, GatewayProbe.Failure>]
  /// Pushes images to devices at once; calls back per device as each ends.
  let push: GatewayPush

  /// What the gateway last learnt of each device, by device.
  private(set) var facts: [String: TargetFacts] = [:]
  /// When each device was last asked.
  private var probedAt: [String: ContinuousClock.Instant] = [:]
  /// Probes in a row that failed, by device: a device that does not say its serial is named by
  /// its address only after three.
  private var failedProbes: [String: Int] = [:]
  /// A probe failed in this cycle: the next cycle asks again (`--until-idle` waits for it).
  private var probesPending = false
  private let clock = ContinuousClock()
  /// The attributes last reported, by controller id.
  private var reported: [String: [String: String]] = [:]
  /// Results delivered since the gateway started: for the closing line. Added to from the
  /// feedback queue's thread.
  let results = GatewayResults()

  init(
    settings: Settings, ddi: DDIClient, cache: ArtifactCache, journal: GatewayJournal, logger: Logger,
    probe: @escaping (_ device: String, _ fallback: Bool) -> Result<TargetFacts, GatewayProbe.Failure>,
    probeSeveral: (([(device: String, fallback: Bool)]) -> [Result<TargetFacts, GatewayProbe.Failure>])? =
      nil,
    push: GatewayPush
  ) {
    self.settings = settings
    self.ddi = ddi
    self.cache = cache
    self.journal = journal
    self.logger = logger
    self.probe = probe
    self.probeSeveral = probeSeveral ?? { $0.map { probe($0.device, $0.fallback) } }
    self.push = push
    feedback = GatewayFeedback(client: ddi, logger: logger)
  }

  /// One cycle: returns how long to sleep before the next, and whether any device had an action
  /// (or was still being registered).
  func cycle() -> (sleep: Duration, busy: Bool) {
    let targets = probeDevices()
    var jobs: [Job] = []
    var sleeps: [Duration] = []
    var registering = false
    // The servers' requests of every target at once; what they say is taken in the targets' order.
    let registrations = GatewayRegistration.run(
      targets.map { ($0.1, reported[$0.1.controllerId] != $0.1.attributes) }, ddi: ddi)
    for ((device, facts), registration) in zip(targets, registrations) {
      let id = facts.controllerId
      let base: DDIControllerBase
      switch registration.poll {
      case .success(let polled): base = polled
      case .failure(let error):
        logger.error("\(id) (\(device)): poll failed: \(error)")
        continue
      }
      switch registration.attributes {
      case .success?: reported[id] = facts.attributes
      case .failure(let error)?: logger.warning("\(id): attributes not delivered: \(error)")
      case nil: break
      }
      // A server that still asks for attributes is still taking the target on: not idle yet.
      registering = registering || base.configData != nil
      if let interval = base.pollingInterval { sleeps.append(interval) }
      // A cancel is taken before anything else: the action it stops is not pushed this cycle.
      if let cancel = base.cancelAction {
        cancelled(cancel, facts)
        continue
      }
      guard let link = base.deploymentBase else { continue }
      switch registration.deployment {
      case .success(let deployment?)?:
        jobs.append(
          Job(device: device, facts: facts, link: link, actionId: deployment.id, deployment: deployment))
      case .failure(let error)?:
        logger.error("\(id): the deployment could not be read: \(error)")
      case .success(nil)?, nil:
        continue
      }
    }
    run(jobs)
    let sleep = DDIPollingInterval.clamped(
      sleeps.min(), default: settings.defaultSleep, bounds: settings.sleepBounds)
    return (sleep, !jobs.isEmpty || registering || probesPending)
  }

  /// Each device's facts, probed when not known yet; a device that two devices' serials collide on
  /// is left out, with the reason.
  private func probeDevices() -> [(String, TargetFacts)] {
    probesPending = false
    // The devices to ask, asked together.
    let asked = devices.filter { device in
      facts[device] == nil || probedAt[device].map { clock.now - $0 > settings.probeInterval } ?? true
    }
    let answers = Dictionary(
      zip(asked, probeSeveral(asked.map { ($0, failedProbes[$0, default: 0] >= 2) })),
      uniquingKeysWith: { first, _ in first })
    var byId: [String: String] = [:]
    var out: [(String, TargetFacts)] = []
    for device in devices {
      let stale = probedAt[device].map { clock.now - $0 > settings.probeInterval } ?? true
      if facts[device] == nil || stale {
        let before = facts[device]
        switch answers[device] ?? probe(device, failedProbes[device, default: 0] >= 2) {
        case .success(let found):
          facts[device] = found
          probedAt[device] = clock.now
          failedProbes[device] = nil
          if before != nil { break }
          logger.info(
            "\(found.controllerId): found at \(device): \(found.model) revision \(found.hardwareRevision), runs \(found.runningVersion)\(found.confirmed ? "" : " on trial")"
          )
        case .failure(let reason):
          logger.warning("\(device): not reached (tried again next poll): \(reason)")
          probedAt[device] = nil
          facts[device] = nil
          failedProbes[device, default: 0] += 1
          if failedProbes[device, default: 0] <= 3 { probesPending = true }
          continue
        }
      }
      guard let known = facts[device] else { continue }
      if let other = byId[known.controllerId] {
        logger.error(
          "\(device) and \(other) both answer as serial \(known.controllerId): \(device) is left out; give each device its own serial ([device] serial in otad.toml)"
        )
        continue
      }
      byId[known.controllerId] = device
      out.append((device, known))
    }
    return out
  }

  /// Just before a device's push begins (it may have waited its turn behind others): whether the
  /// server has cancelled the action since the cycle's poll. A cancel found is taken.
  func cancelledBeforePush(_ job: Job) -> Bool {
    guard let base = try? ddi.poll(job.facts.controllerId), let cancel = base.cancelAction else {
      return false
    }
    cancelled(cancel, job.facts)
    return true
  }

  /// A cancel the server sends between pushes: the gateway has nothing under way for the target
  /// (pushes run inside a cycle), so it is taken, and the device is left as it is.
  private func cancelled(_ link: DDILink, _ facts: TargetFacts) {
    let id = facts.controllerId
    do {
      let cancel = try ddi.cancelAction(link, for: id)
      let accepted = feedback.close(
        DDIFeedback(
          execution: .closed, finished: .success,
          details: [
            "cancelled action \(cancel.cancelAction.stopId): nothing was under way; the device keeps \(facts.runningVersion)"
          ]),
        on: link, for: id)
      if accepted {
        try? journal.closed(on: id)
        logger.info("\(id): action \(cancel.cancelAction.stopId) cancelled by the server; nothing pushed")
      }
    } catch {
      logger.error("\(id): the cancel could not be read: \(error)")
    }
  }

  /// Refuses a job with a closing failure that says why; nothing is pushed.
  func refuse(_ job: Job, _ reason: String) {
    logger.error("\(job.facts.controllerId): action \(job.actionId): \(reason); nothing pushed")
    close(job, success: false, [reason])
  }

  /// Closes the job's action on the server. `wait: false` (from the push loop): queued, so that
  /// the other devices' links go on; the journal forgets the action once the server has it.
  func close(_ job: Job, success: Bool, _ details: [String], wait: Bool = true) {
    let id = job.facts.controllerId
    let message: DDIFeedback = success ? .success(details) : .failure(details)
    let (journal, results) = (self.journal, self.results)
    let delivered: @Sendable (Bool) -> Void = { sent in
      guard sent else { return }
      try? journal.closed(on: id)
      results.add(success: success)
    }
    if wait {
      delivered(feedback.close(message, on: job.link, for: id))
    } else {
      feedback.closeLater(message, on: job.link, for: id, delivered: delivered)
    }
  }

  /// The cycle's jobs: artifacts chosen and fetched once each, each device's image checked, then
  /// pushed together.
  private func run(_ jobs: [Job]) {
    var groups: [String: (reference: ArtifactReference, jobs: [Job])] = [:]
    var order: [String] = []
    for job in jobs {
      if job.deployment.deployment.update?.lowercased() == "skip"
        || job.deployment.deployment.maintenanceWindow?.lowercased() == "unavailable"
      {
        logger.info(
          "\(job.facts.controllerId): action \(job.actionId) is not to be installed yet (update skip or outside its maintenance window)"
        )
        continue
      }
      do {
        let reference = try ArtifactReference.choose(from: job.deployment, serverScheme: ddi.scheme)
        if groups[reference.key] == nil { order.append(reference.key) }
        groups[reference.key, default: (reference, [])].jobs.append(job)
      } catch {
        refuse(job, error.description)
      }
    }
    var pushes: [GatewayPush.Item] = []
    for key in order {
      guard let (reference, group) = groups[key] else { continue }
      let artifact: GatewayArtifact
      do {
        let fetch = try cache.fetch(reference, client: ddi, for: group[0].facts.controllerId)
        if fetch.downloaded > 0 {
          logger.info(
            "downloaded \(reference.filename) (\(fetch.downloaded) bytes\(fetch.resumedFrom > 0 ? ", resumed at \(fetch.resumedFrom)" : ""), \(reference.algorithm.rawValue) checked) for \(group.count) device(s)"
          )
        }
        artifact = try GatewayArtifact(bytes: fetch.bytes)
      } catch let refusal as GatewayRefusal {
        if case .download(let reason) = refusal, reason.contains("kept to resume") {
          logger.warning("\(refusal): tried again next poll")
        } else {
          for job in group { refuse(job, refusal.description) }
        }
        continue
      } catch {
        logger.error("\(reference.filename): the download failed (tried again next poll): \(error)")
        continue
      }
      for job in group {
        if let item = plan(job, artifact) { pushes.append(item) }
      }
    }
    do {
      try cache.prune(keeping: 3, inUse: Set(order))
    } catch {
      logger.warning("the download cache could not be pruned: \(error)")
    }
    guard !pushes.isEmpty else { return }
    push.run(pushes, gateway: self)
  }

  /// What to do with one device's job once its artifact is here: push, report without pushing, or
  /// refuse.
  private func plan(_ job: Job, _ artifact: GatewayArtifact) -> GatewayPush.Item? {
    let facts = job.facts
    let image: (bytes: [UInt8], version: Version)
    do {
      image = try artifact.image(model: facts.model, revision: facts.hardwareRevision)
    } catch {
      refuse(job, error.description)
      return nil
    }
    if facts.runningVersion == image.version, facts.confirmed {
      logger.info("\(facts.controllerId): already runs \(image.version), confirmed")
      close(job, success: true, ["runs \(image.version), confirmed"])
      return nil
    }
    if journal.action(on: facts.controllerId) == job.actionId, facts.rolledBack(from: image.version) {
      let reason =
        "rolled back from \(image.version): \(facts.info.lastOutcome.reason); runs \(facts.runningVersion)"
      logger.error("\(facts.controllerId): action \(job.actionId): \(reason)")
      close(job, success: false, [reason])
      return nil
    }
    do {
      try journal.began(job.actionId, on: facts.controllerId)
    } catch {
      logger.error("\(facts.controllerId): the gateway's journal cannot be written (\(error)); not pushed")
      return nil
    }
    return GatewayPush.Item(job: job, image: image.bytes, version: image.version)
  }

  /// A device's push ended: its facts are what the device said last (sent to the server as its
  /// attributes at the next poll, off the push loop).
  func learnt(_ info: InfoRecord?, for job: Job) {
    if let info {
      facts[job.device]?.info = info
      probedAt[job.device] = clock.now
    } else {
      facts[job.device] = nil
    }
  }
}

/// How many results the server took, success and failure.
final class GatewayResults: Sendable {
  private let counts = Mutex((success: 0, failure: 0))

  func add(success: Bool) {
    counts.withLock { success ? ($0.success += 1) : ($0.failure += 1) }
  }

  var success: Int { counts.withLock { $0.success } }
  var failure: Int { counts.withLock { $0.failure } }
}
