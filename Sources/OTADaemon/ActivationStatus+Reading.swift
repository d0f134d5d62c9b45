import Logging
import OTAJournal
import OTAReceiverHost
import OTAReport
import OTAStorage
import OTAWire

extension ActivationStatus {
  /// What the records, the lock directory and the policy say now, as the running daemon weighs
  /// them (the kept activation counts only when it names the validated transfer).
  static func read(
    _ storage: DeviceStorage, journal: TransferJournal?, configuration: DaemonConfiguration,
    surroundings: UpdateLockDirectory
  ) -> ActivationStatus {
    // The running daemon's policy and lock directory, as it recorded them at its start.
    let recorded = (try? storage.records.load(ActivationRecords.policyName)).flatMap { $0 }.flatMap(
      ActivationRecords.decodePolicy)
    let policy = recorded?.policy ?? configuration.activationPolicy
    let surroundings =
      recorded.map { UpdateLockDirectory(path: $0.lockDirectory, logger: surroundings.logger) }
      ?? surroundings
    let now = surroundings.wallClock()
    let files = surroundings.survey()
    let consent = ActivationRecords.loadConsent(storage.records)
    let record = (try? storage.records.load(ActivationRecords.activationName)).flatMap { $0 }.flatMap(
      ActivationRecords.decodeActivation)
    var kept: Kept?
    if let record, let journal, journal.state == .validated, ReceiverHost.matches(record, journal) {
      let verdict = policy.decide(
        record, now: now, locks: surroundings.updateLocks(), consent: consent)
      let (hold, detail): (String, String) =
        switch verdict {
        case .go(let overrode):
          (
            "none",
            overrode.map { "goes ahead within a second, over \($0): its maximum deferral passed" }
              ?? "goes ahead within a second"
          )
        case .hold(let reason, let detail, let after):
          (
            "\(reason)",
            "\(detail); a central is told to ask again in \(after) s; the device looks every second"
          )
        case .declined: ("declined", "the staged image is dropped at the next look")
        case .windowPassed: ("window passed", "it lapses at the next look; the image stays validated")
        }
      kept = Kept(
        version: "\(record.version)", kind: record.permanent ? "permanent" : "trial",
        notBefore: record.notBefore,
        notAfter: record.notAfter, firstHeld: record.firstHeld, security: record.security, hold: hold,
        detail: detail)
    }
    return ActivationStatus(
      consentRequired: policy.requireConsent,
      maxDeferral: policy.maxDeferral,
      lockDirectory: surroundings.path,
      locks: files.map { file in
        switch file.state {
        case .holding(let lock):
          Lock(holder: file.holder, state: "holding", reason: lock.reason, pid: lock.pid, until: lock.until)
        case .stale(let lock, let why):
          Lock(
            holder: file.holder, state: "stale (\(why))", reason: lock.reason, pid: lock.pid,
            until: lock.until)
        case .unreadable:
          Lock(holder: file.holder, state: "unreadable", reason: nil, pid: nil, until: nil)
        }
      },
      kept: kept,
      consent: consent.map {
        Consent(version: "\($0.version)", decision: $0.decision.rawValue, until: $0.until, at: $0.at)
      })
  }
}
