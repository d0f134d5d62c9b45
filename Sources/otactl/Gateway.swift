import Foundation
import Logging
import OTACentral
import OTAGateway
import OTAGatewayHTTP
import OTASystem
import OTAWire
import Synchronization

/// The gateway's work, one poll cycle at a time: each device near it a DDI target named by its own
/// serial (bound to the Bluetooth identity that first said it, `TargetBindings`), its attributes
/// reported, its deployment's artifact downloaded once for every device that has it, pushed to them
/// at once, and each result reported once. A serial two identities claim is served to neither.
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
    /// The Bluetooth identity the serial is bound to.
    var identity: String
    /// What hawkBit's model asks of the action (`GatewayStaging.swift`, `GatewayConfirmation.swift`).
    var mode: ActionMode = .install
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
  let probe: (_ device: String, _ fallback: Bool) -> Result<GatewayProbe.Found, GatewayProbe.Failure>
  /// Reads several devices' Info and identity at once, each answer in the order asked.
  let probeSeveral:
    (_ devices: [(device: String, fallback: Bool)]) -> [Result<GatewayProbe.Found, GatewayProbe.Failure>]
  /// Each serial's Bluetooth identity, and the serials in alarm; saved in `bindingStore` whenever
  /// they change, before any device is served.
  private var bindings: TargetBindings
  let bindingStore: BindingStore
  /// Pushes images to devices at once; calls back per device as each ends.
  let push: GatewayPush
  /// What the staging and confirmation of actions remember between polls.
  let holds = GatewayHolds()

  /// What the gateway last learnt of each device, by device.
  private(set) var facts: [String: TargetFacts] = [:]
  /// The Bluetooth identity each device answered from at its last probe, by device.
  private var identities: [String: String] = [:]
  /// The actions told already (this run) that their target is in alarm, by deploymentBase link.
  private var alarmsSaid = Set<String>()
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
    settings: Settings, ddi: DDIClient, cache: ArtifactCache, journal: GatewayJournal,
    bindings: TargetBindings, bindingStore: BindingStore, logger: Logger,
    probe: @escaping (_ device: String, _ fallback: Bool) -> Result<GatewayProbe.Found, GatewayProbe.Failure>,
    probeSeveral: (
      ([(device: String, fallback: Bool)]) -> [Result<GatewayProbe.Found, GatewayProbe.Failure>]
    )? =
      nil,
    push: GatewayPush
  ) {
    self.bindings = bindings
    self.bindingStore = bindingStore
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
    let (targets, alarms) = probeDevices()
    for alarm in alarms { raise(alarm) }
    var jobs: [Job] = []
    var sleeps: [Duration] = []
    var registering = false
    // The servers' requests of every target at once; what they say is taken in the targets' order.
    let registrations = GatewayRegistration.run(
      targets.map { target in
        let told = attributes(target.facts, target.identity)
        return (target.facts.controllerId, told, reported[target.facts.controllerId] != told)
      }, ddi: ddi)
    for ((device, identity, facts), registration) in zip(targets, registrations) {
      let id = facts.controllerId
      let base: DDIControllerBase
      switch registration.poll {
      case .success(let polled): base = polled
      case .failure(let error):
        logger.error("\(id) (\(device)): poll failed: \(error)")
        continue
      }
      switch registration.attributes {
      case .success?: reported[id] = attributes(facts, identity)
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
      if let confirmation = base.confirmationBase {
        if let job = confirmationJob(confirmation, device: device, identity: identity, facts: facts) {
          jobs.append(job)
        }
        continue
      }
      guard let link = base.deploymentBase else { continue }
      switch registration.deployment {
      case .success(let deployment?)?:
        jobs.append(
          Job(
            device: device, facts: facts, link: link, actionId: deployment.id, deployment: deployment,
            identity: identity, mode: ActionMode(deployment.deployment)))
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

  /// Each device's facts, probed when not known yet, admitted by the bindings: the devices to serve
  /// (each with the identity its serial is bound to), and the serials in alarm.
  private func probeDevices() -> (
    targets: [(device: String, identity: String, facts: TargetFacts)], alarms: [TargetBindings.Alarm]
  ) {
    probesPending = false
    // The devices to ask, asked together.
    let asked = devices.filter { device in
      facts[device] == nil || probedAt[device].map { clock.now - $0 > settings.probeInterval } ?? true
    }
    let answers = Dictionary(
      zip(asked, probeSeveral(asked.map { ($0, failedProbes[$0, default: 0] >= 2) })),
      uniquingKeysWith: { first, _ in first })
    var sightings: [TargetBindings.Sighting] = []
    for device in devices {
      let stale = probedAt[device].map { clock.now - $0 > settings.probeInterval } ?? true
      if facts[device] == nil || stale {
        let before = facts[device]
        switch answers[device] ?? probe(device, failedProbes[device, default: 0] >= 2) {
        case .success(let found):
          facts[device] = found.facts
          identities[device] = found.identity
          probedAt[device] = clock.now
          failedProbes[device] = nil
          if before != nil { break }
          logger.info(
            "\(found.facts.controllerId): found at \(device) (\(found.identity)): \(found.facts.model) revision \(found.facts.hardwareRevision), runs \(found.facts.runningVersion)\(found.facts.confirmed ? "" : " on trial")"
          )
        case .failure(let reason):
          logger.warning("\(device): not reached (tried again next poll): \(reason)")
          probedAt[device] = nil
          facts[device] = nil
          identities[device] = nil
          failedProbes[device, default: 0] += 1
          if failedProbes[device, default: 0] <= 3 { probesPending = true }
          continue
        }
      }
      guard let known = facts[device], let identity = identities[device] else { continue }
      sightings.append(.init(device: device, identity: identity, serial: known.controllerId))
    }
    let now = Int64(ProcessEnvironment.wallClockMicroseconds / 1000)
    let admitted = bindings.admit(sightings, now: now)
    if admitted.changed {
      do {
        try bindingStore.save(bindings)
      } catch {
        // A binding not kept would not hold after a restart: nothing is served until it is.
        logger.error("\(error); no device is served until it is")
        return ([], admitted.alarms)
      }
    }
    let targets = admitted.serve.compactMap { sighting in
      facts[sighting.device].map { (sighting.device, sighting.identity, $0) }
    }
    return (targets, admitted.alarms)
  }

  /// A serial in alarm: said in the log at every poll; when one of its devices is near, said to the
  /// server as the target's `identity_alarm` attribute and, once per action, as progress feedback
  /// that leaves the action open. Nothing is pushed and nothing closed: an operator settles it.
  private func raise(_ alarm: TargetBindings.Alarm) {
    let id = alarm.serial
    let at = alarm.devices.isEmpty ? "none of its devices is near now" : alarm.devices.joined(separator: ", ")
    logger.error("\(id): identity alarm (\(at)): \(alarm)")
    guard !alarm.devices.isEmpty else { return }
    let base: DDIControllerBase
    do {
      base = try ddi.poll(id)
    } catch {
      logger.error("\(id): poll failed: \(error)")
      return
    }
    let attributes = ["identity_alarm": "\(alarm)"]
    if reported[id] != attributes {
      do {
        try ddi.configData(attributes, for: id)
        reported[id] = attributes
      } catch {
        logger.warning("\(id): the alarm attribute was not delivered: \(error)")
      }
    }
    guard let link = base.deploymentBase, !alarmsSaid.contains(link.href) else { return }
    do {
      try ddi.feedback(
        DDIFeedback(
          execution: .proceeding, finished: .none, details: ["not served by the gateway: \(alarm)"]),
        on: link, for: id)
      alarmsSaid.insert(link.href)
    } catch {
      logger.warning("\(id): the alarm feedback was not delivered (sent again next poll): \(error)")
    }
  }

  /// What the server is told of a served target: its facts, the identity its serial is bound to,
  /// and that no alarm stands (replacing an alarm said before an operator settled it).
  private func attributes(_ facts: TargetFacts, _ identity: String) -> [String: String] {
    facts.attributes.merging(["bluetooth_identity": identity, "identity_alarm": "none"]) { $1 }
  }

  private func report(_ facts: TargetFacts, _ identity: String) {
    let attributes = attributes(facts, identity)
    do {
      try ddi.configData(attributes, for: facts.controllerId)
      reported[facts.controllerId] = attributes
    } catch {
      logger.warning("\(facts.controllerId): attributes not delivered: \(error)")
    }
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
    close(job, success ? .success(details) : .failure(details), success: success, wait: wait)
  }

  /// Closes the job's action with `message` (a closing feedback), counted as a success or not.
  func close(_ job: Job, _ message: DDIFeedback, success: Bool, wait: Bool) {
    let id = job.facts.controllerId
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
      if job.mode == .notYet {
        logger.info(
          "\(job.facts.controllerId): action \(job.actionId) is not to be downloaded yet (download skip)")
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
        artifact = try GatewayArtifact(bytes: try fetch.bytes())
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
    if job.mode != .install { return planStaged(job, image: image.bytes, version: image.version) }
    // This gateway began the action on this serial (bound to this identity) in an earlier cycle or
    // run: what the device shows now is the result of its own push.
    let ownPush = journal.action(on: facts.controllerId) == job.actionId
    if facts.runningVersion == image.version, facts.confirmed {
      // The device's word that it runs the version proves nothing: its running image's size and
      // CRC32 must be the artifact's image's, or the action this gateway's own; else it is pushed.
      let proof =
        facts.provesItRuns(image.bytes)
        ? "its running image is the artifact's (size and CRC32)"
        : ownPush ? "after this gateway's push of action \(job.actionId)" : nil
      if let proof {
        logger.info("\(facts.controllerId): already runs \(image.version), confirmed, \(proof)")
        close(job, success: true, ["runs \(image.version), confirmed; \(proof)"])
        return nil
      }
      logger.warning(
        "\(facts.controllerId): says it runs \(image.version), confirmed, but its running image (\(facts.info.runningImageSize) bytes, CRC32 \(String(facts.info.runningImageCRC, radix: 16))) is not the artifact's (\(image.bytes.count) bytes): pushed"
      )
    }
    if ownPush, facts.rolledBack(from: image.version) {
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
    return GatewayPush.Item(job: job, image: image.bytes, version: image.version, ownPush: ownPush)
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
