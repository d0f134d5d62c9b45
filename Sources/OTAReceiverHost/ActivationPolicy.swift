import OTAWire

/// An update lock an application on the device holds (docs/OTAD.md, "The device has a say"): while
/// it holds, a validated image is kept, not activated. Read from the lock directory at the edge.
public struct UpdateLock: Equatable, Sendable {
  /// The lock file's name: who holds it.
  public var holder: String
  public var reason: String
  /// Its holder's process, when it named one; a lock whose process is gone holds nothing.
  public var pid: Int32?
  /// Seconds since 1970 UTC at which the lock lapses by itself; nil: while its process lives.
  public var until: Int64?

  public init(holder: String, reason: String, pid: Int32?, until: Int64?) {
    self.holder = holder
    self.reason = reason
    self.pid = pid
    self.until = until
  }

  /// Holds at `now`: its deadline (if any) not passed. Whether its process lives is the reader's
  /// business (a lock from a dead process is never handed to the policy).
  public func holds(at now: Int64) -> Bool { until.map { now < $0 } ?? true }
}

/// The owner's answer about one version (`otad consent`), kept as the record `consent`.
public struct ConsentAnswer: Equatable, Sendable {
  public enum Decision: String, Sendable, CaseIterable {
    case accept, postpone, decline
  }
  /// The version the answer is about: an answer about another one counts for nothing.
  public var version: Version
  public var decision: Decision
  /// For `postpone`: until when (seconds since 1970 UTC).
  public var until: Int64?
  /// When it was given.
  public var at: Int64

  public init(version: Version, decision: Decision, until: Int64? = nil, at: Int64) {
    self.version = version
    self.decision = decision
    self.until = until
    self.at = at
  }
}

/// An activation the device keeps for a validated image: a deferred ACTIVATE (of any protocol) or a
/// SCHEDULE. It names the image it is for, so that a record that outlived its image counts for
/// nothing. Kept as the record `activation`.
public struct KeptActivationRecord: Equatable, Sendable {
  public var slot: SlotID
  public var version: Version
  public var size: UInt32
  public var crc32: UInt32
  public var permanent: Bool
  public var notBefore: Int64?
  public var notAfter: Int64?
  /// When the device first held this image's activation back: the maximum deferral counts from it.
  public var firstHeld: Int64
  /// The image raises the security counter (MCUboot's TLV 0x50) above the running image's.
  public var security: Bool

  public init(
    slot: SlotID, version: Version, size: UInt32, crc32: UInt32, permanent: Bool, notBefore: Int64? = nil,
    notAfter: Int64? = nil, firstHeld: Int64, security: Bool
  ) {
    self.slot = slot
    self.version = version
    self.size = size
    self.crc32 = crc32
    self.permanent = permanent
    self.notBefore = notBefore
    self.notAfter = notAfter
    self.firstHeld = firstHeld
    self.security = security
  }
}

/// What the owner of the device configured: whether an update needs consent, and how long a
/// security update may be held back in all (locks, postponements, no answer) before it goes ahead.
public struct ActivationPolicy: Equatable, Sendable {
  public static let defaultMaxDeferral: Int64 = 7 * 24 * 3600
  /// How often a held activation is looked at again when nothing says when it may clear.
  public static let lookAgain: Int64 = 60

  public var requireConsent: Bool
  public var maxDeferral: Int64

  public init(requireConsent: Bool = false, maxDeferral: Int64 = ActivationPolicy.defaultMaxDeferral) {
    self.requireConsent = requireConsent
    self.maxDeferral = maxDeferral
  }

  public enum Verdict: Equatable, Sendable {
    /// Activate now. `overrode`: what would have held it, had the maximum deferral of a security
    /// update not passed.
    case go(overrode: ActivationHoldReason?)
    /// Not now: what holds it, its words, and in how many seconds to look again.
    case hold(ActivationHoldReason, detail: String, askAgainAfter: Int64)
    /// The owner declined this update: the staged image is dropped.
    case declined
    /// The window passed before anything let the activation happen: the kept activation lapses,
    /// the image stays validated.
    case windowPassed
  }

  /// Whether the kept activation `kept` goes ahead at `now`. Pure.
  public func decide(
    _ kept: KeptActivationRecord, now: Int64, locks: [UpdateLock], consent: ConsentAnswer?
  ) -> Verdict {
    if let end = kept.notAfter, now >= end { return .windowPassed }
    if let start = kept.notBefore, now < start {
      return .hold(.beforeWindow, detail: "its window opens in \(start - now) s", askAgainAfter: start - now)
    }
    let answer = consent.flatMap { $0.version == kept.version ? $0 : nil }
    let deadline = kept.firstHeld + maxDeferral
    let overdue = kept.security && now >= deadline
    let held = heldBy(locks: locks, answer: answer, now: now, security: kept.security)
    guard let (reason, detail, after) = held else { return .go(overrode: nil) }
    if reason == .none { return .declined }
    if overdue { return .go(overrode: reason) }
    // A security update is looked at again when its maximum deferral ends, whatever holds it.
    let capped = kept.security ? min(after, deadline - now) : after
    return .hold(reason, detail: detail, askAgainAfter: max(1, capped))
  }

  /// What holds an activation, if anything; reason `.none` means the owner declined it.
  private func heldBy(locks: [UpdateLock], answer: ConsentAnswer?, now: Int64, security: Bool)
    -> (ActivationHoldReason, String, Int64)?
  {
    if let lock = locks.filter({ $0.holds(at: now) }).min(by: { $0.holder < $1.holder }) {
      let after = lock.until.map { min($0 - now, Self.lookAgain) } ?? Self.lookAgain
      return (.locked, "\(lock.holder) holds an update lock: \(lock.reason)", after)
    }
    guard requireConsent else { return nil }
    switch answer?.decision {
    case .accept?:
      return nil
    case .decline?:
      // A security update may be postponed (up to the maximum deferral), never declined.
      return security ? (.postponed, "declined, but it is a security update", Self.lookAgain) : (.none, "", 0)
    case .postpone?:
      let until = answer?.until ?? now
      if until > now { return (.postponed, "postponed by its owner for \(until - now) s", until - now) }
      return (.awaitingConsent, "its postponement ended; it awaits consent", Self.lookAgain)
    case nil:
      return (.awaitingConsent, "it awaits its owner's consent", Self.lookAgain)
    }
  }
}
