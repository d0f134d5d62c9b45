/// The device's say over activations, as `otad status` shows it (docs/OTAD.md, "The device has a
/// say"): what the owner configured, the update locks in the lock directory, the activation the
/// device keeps and what holds it now, and the owner's answer.
public struct ActivationStatus: Codable, Equatable, Sendable {
  public struct Lock: Codable, Equatable, Sendable {
    /// The lock file's name without `.lock`.
    public var holder: String
    /// holding, stale (with why) or unreadable.
    public var state: String
    public var reason: String?
    public var pid: Int32?
    /// Seconds since 1970 UTC.
    public var until: Int64?

    public init(holder: String, state: String, reason: String?, pid: Int32?, until: Int64?) {
      self.holder = holder
      self.state = state
      self.reason = reason
      self.pid = pid
      self.until = until
    }
  }

  public struct Kept: Codable, Equatable, Sendable {
    public var version: String
    /// trial or permanent.
    public var kind: String
    /// Seconds since 1970 UTC; nil: at once / no end.
    public var notBefore: Int64?
    public var notAfter: Int64?
    public var firstHeld: Int64
    public var security: Bool
    /// What holds it now (none, an update lock, awaiting consent, postponed, before its window,
    /// declined, window passed) and in words.
    public var hold: String
    public var detail: String

    public init(
      version: String, kind: String, notBefore: Int64?, notAfter: Int64?, firstHeld: Int64, security: Bool,
      hold: String, detail: String
    ) {
      self.version = version
      self.kind = kind
      self.notBefore = notBefore
      self.notAfter = notAfter
      self.firstHeld = firstHeld
      self.security = security
      self.hold = hold
      self.detail = detail
    }
  }

  public struct Consent: Codable, Equatable, Sendable {
    public var version: String
    /// accept, postpone or decline.
    public var decision: String
    public var until: Int64?
    public var at: Int64

    public init(version: String, decision: String, until: Int64?, at: Int64) {
      self.version = version
      self.decision = decision
      self.until = until
      self.at = at
    }
  }

  public var consentRequired: Bool
  /// Seconds a security update may be held back in all.
  public var maxDeferral: Int64
  public var lockDirectory: String
  public var locks: [Lock]
  public var kept: Kept?
  public var consent: Consent?

  public init(
    consentRequired: Bool, maxDeferral: Int64, lockDirectory: String, locks: [Lock], kept: Kept?,
    consent: Consent?
  ) {
    self.consentRequired = consentRequired
    self.maxDeferral = maxDeferral
    self.lockDirectory = lockDirectory
    self.locks = locks
    self.kept = kept
    self.consent = consent
  }

  /// `otad status`'s lines about it.
  public var lines: [String] {
    var lines: [String] = []
    let holding = locks.filter { $0.state == "holding" }
    lines.append(
      "activation: "
        + (consentRequired ? "needs the owner's consent" : "no consent needed")
        + ", security updates held at most \(maxDeferral / 3600) h; "
        + (holding.isEmpty
          ? "no update lock held" : "\(holding.count) update lock\(holding.count == 1 ? "" : "s") held"))
    for lock in locks {
      lines.append(
        "  lock \(lock.holder): \(lock.state)" + (lock.reason.map { ": \($0)" } ?? "")
          + (lock.pid.map { " (pid \($0))" } ?? ""))
    }
    if let kept {
      lines.append(
        "  kept activation: \(kept.version) as a \(kept.kind)"
          + (kept.security ? " (a security update)" : "") + "; \(kept.hold): \(kept.detail)")
    }
    if let consent {
      lines.append("  owner's answer about \(consent.version): \(consent.decision)")
    }
    return lines
  }
}
