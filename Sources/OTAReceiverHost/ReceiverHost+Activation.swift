import OTAJournal
import OTAStorage
import OTAWire

/// The wall clock and the update locks an activation is weighed against, read at the edge (otad
/// reads its lock directory and the system clock). Seconds since 1970 UTC.
public protocol ActivationSurroundings: Sendable {
  func wallClock() -> Int64
  func updateLocks() -> [UpdateLock]
}

/// Surroundings with no lock and a clock that says what it is given: the default of a host that
/// is not a daemon (tests, fuzzers, the simulation).
public struct QuietSurroundings: ActivationSurroundings {
  public var time: Int64
  public var locks: [UpdateLock]

  public init(time: Int64 = 0, locks: [UpdateLock] = []) {
    self.time = time
    self.locks = locks
  }

  public func wallClock() -> Int64 { time }
  public func updateLocks() -> [UpdateLock] { locks }
}

/// What the device did with the activation it keeps, at one look (`activateKeptIfDue`).
public enum KeptActivationStep: Equatable, Sendable {
  case nothing
  /// Still held: why, in words.
  case held(ActivationHoldReason, String)
  /// Activated: the device restarts into it. `overrode`: what would have held a security update
  /// whose maximum deferral passed.
  case activated(TransferJournal, overrode: ActivationHoldReason?)
  /// The owner declined the update: the image was dropped.
  case declined(Version)
  /// Its window passed: the kept activation lapsed, the image stays validated.
  case lapsed(Version)
  /// The activation failed (the image no longer passes its check, or the storage failed).
  case failed(String)
}

/// The device's say over activations (docs/OTAD.md, "The device has a say"): an ACTIVATE of any
/// protocol is weighed against the update locks, the owner's consent and the window before the
/// boot pointer moves; what is held is kept as a record, and the device activates on its own once
/// nothing holds it. Nothing here touches a rollback or a confirmation.
extension ReceiverHost {
  /// Weighs activating the validated `journal` now, at a central's request: its kept record (the
  /// first hold kept, so the maximum deferral counts from it) with the request's permanence and no
  /// window (a request asks for now). A hold is kept as a record; anything else is not.
  mutating func weighRequestedActivation(_ journal: TransferJournal, permanent: Bool) throws(StorageError)
    -> ActivationPolicy.Verdict
  {
    let now = surroundings.wallClock()
    var kept =
      keptActivation.flatMap { Self.matches($0, journal) ? $0 : nil }
      ?? KeptActivationRecord(
        slot: journal.slot, version: journal.version, size: journal.size, crc32: journal.crc32,
        permanent: permanent, firstHeld: now, security: false)
    kept.permanent = permanent
    kept.notBefore = nil
    kept.notAfter = nil
    var verdict = weigh(kept, now: now)
    let heldBefore = keptActivation.map { Self.matches($0, journal) } ?? false
    if case .hold = verdict, !heldBefore {
      // Held for the first time: whether it is a security update decides whether the hold ends.
      kept.security = try raisesSecurityCounter(journal)
      verdict = weigh(kept, now: now)
    }
    if case .hold = verdict { try keep(kept) }
    return verdict
  }

  /// SCHEDULE (features bit 5): the validated image's activation kept for a window, whoever
  /// uploaded it. Answers at once; the device activates on its own within the window.
  mutating func schedule(_ bytes: [UInt8]) throws(StorageError) -> Response {
    let window: ActivationWindow
    do {
      guard case .schedule(let asked) = try Request(bytes: bytes) else {
        return Response(.schedule, .invalidLength)
      }
      window = asked
    } catch {
      return Response(.schedule, error.status)
    }
    guard let transfer = transaction.transfer, transfer.journal.state == .validated else {
      return Response(.schedule, .invalidState)
    }
    if transaction.heldByAnother(.ota) { return Response(.schedule, .busy) }
    let now = surroundings.wallClock()
    let start = Int64(window.notBefore)
    if let end = window.notAfter.map(Int64.init), end <= max(start, now) {
      return Response(.schedule, .invalidParameter)
    }
    let journal = transfer.journal
    let kept = KeptActivationRecord(
      slot: journal.slot, version: journal.version, size: journal.size, crc32: journal.crc32,
      permanent: window.permanent, notBefore: start, notAfter: window.notAfter.map(Int64.init),
      firstHeld: max(now, start), security: try raisesSecurityCounter(journal))
    try keep(kept)
    lastActivationVerdict = (weigh(kept, now: now), now)
    return Response(.schedule, .success)
  }

  /// The kept activation looked at again (the daemon does it every second while there is one):
  /// carried out when nothing holds it, dropped when declined or its window passed. Not while a
  /// protocol's session holds the device: its central may be talking to it.
  public mutating func activateKeptIfDue() throws(StorageError) -> KeptActivationStep {
    guard let kept = keptActivation else { return .nothing }
    guard let transfer = transaction.transfer, transfer.journal.state == .validated,
      Self.matches(kept, transfer.journal)
    else {
      try forgetKeptActivation()
      return .nothing
    }
    if transaction.isHeld { return .nothing }
    let now = surroundings.wallClock()
    switch weigh(kept, now: now) {
    case .hold(let reason, let detail, _):
      return .held(reason, detail)
    case .windowPassed:
      try forgetKeptActivation()
      return .lapsed(kept.version)
    case .declined:
      try discard(transfer.id)
      try forgetKeptActivation()
      return .declined(kept.version)
    case .go(let overrode):
      guard let claimed = claimValidated(transfer.journal.owner) else { return .nothing }
      let result = try activateNow(claimed.id, permanent: kept.permanent)
      syncEngineTransfer()
      switch result {
      case .success(let journal): return .activated(journal, overrode: overrode)
      case .failure(let error): return .failed("\(error)")
      }
    }
  }

  /// Info's activation fields now.
  var keptActivationInfo: KeptActivation {
    guard let kept = keptActivation else { return .none }
    var hold = ActivationHoldReason.none
    var askAgain: UInt32 = 0
    if let (verdict, at) = lastActivationVerdict, case .hold(let reason, _, let after) = verdict {
      hold = reason
      askAgain = UInt32(clamping: max(0, at + after - surroundings.wallClock()))
    }
    return KeptActivation(
      kind: kept.permanent ? .permanent : .trial, hold: hold,
      notBefore: UInt32(clamping: kept.notBefore ?? 0), notAfter: kept.notAfter.map { UInt32(clamping: $0) },
      askAgainAfter: askAgain)
  }

  /// The kept activation forgotten (carried out, declined, lapsed, or its image gone).
  mutating func forgetKeptActivation() throws(StorageError) {
    guard keptActivation != nil else { return }
    keptActivation = nil
    lastActivationVerdict = nil
    try storage.records.remove(ActivationRecords.activationName)
  }

  /// At start: the record of a kept activation, trusted only when it names the validated transfer
  /// the journal holds; any other (an image since activated or dropped, a damaged record) is removed.
  mutating func loadKeptActivation() throws(StorageError) {
    guard let bytes = try storage.records.load(ActivationRecords.activationName) else { return }
    if let kept = ActivationRecords.decodeActivation(bytes), let journal = transaction.transfer?.journal,
      journal.state == .validated, Self.matches(kept, journal)
    {
      keptActivation = kept
      return
    }
    if ActivationRecords.decodeActivation(bytes) == nil {
      startNotices.append(
        "the kept activation's record did not parse; removed: the image stays validated, a central asks again"
      )
    }
    try storage.records.remove(ActivationRecords.activationName)
  }

  private mutating func weigh(_ kept: KeptActivationRecord, now: Int64) -> ActivationPolicy.Verdict {
    let verdict = activationPolicy.decide(
      kept, now: now, locks: surroundings.updateLocks(),
      consent: ActivationRecords.loadConsent(storage.records))
    lastActivationVerdict = (verdict, now)
    return verdict
  }

  private mutating func keep(_ kept: KeptActivationRecord) throws(StorageError) {
    guard keptActivation != kept else { return }
    try storage.records.replace(ActivationRecords.activationName, with: ActivationRecords.encode(kept))
    keptActivation = kept
  }

  /// The image raises the security counter above the running image's (MCUboot's TLV 0x50): a
  /// security update, which no lock or postponement holds back past the maximum deferral.
  private mutating func raisesSecurityCounter(_ journal: TransferJournal) throws(StorageError) -> Bool {
    let plaintextBelow = try decryptedPayloadEnd(journal)
    guard case .valid(let counter, _, _) = try checkImage(journal, plaintextBelow: plaintextBelow) else {
      return false
    }
    return counter > boot[running].securityCounter
  }

  public static func matches(_ kept: KeptActivationRecord, _ journal: TransferJournal) -> Bool {
    kept.slot == journal.slot && kept.version == journal.version && kept.size == journal.size
      && kept.crc32 == journal.crc32
  }
}
