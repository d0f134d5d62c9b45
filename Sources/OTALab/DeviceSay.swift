import OTAReport

/// The device's say over activations as the page draws it (docs/OTAD.md, "The device has a say"),
/// from `otad status`'s `activation` object: whether an update needs the owner's consent, the update
/// locks in the lock directory, the activation the device keeps (its version, trial or permanent,
/// what holds it in otad's words, its window) and the owner's last answer. Times are drawn as UTC
/// clock times, so the page does no arithmetic.
public struct DeviceSay: Codable, Equatable, Sendable {
  public struct Lock: Codable, Equatable, Sendable {
    public var holder: String
    /// holding, stale (with why) or unreadable: otad's words.
    public var state: String
    public var reason: String?

    public init(holder: String, state: String, reason: String?) {
      self.holder = holder
      self.state = state
      self.reason = reason
    }
  }

  public struct Kept: Codable, Equatable, Sendable {
    /// "2.0.0+0", as the slots show versions.
    public var version: String
    /// trial or permanent.
    public var kind: String
    /// What holds it (none, an update lock, awaiting consent, postponed, before its window,
    /// declined, window passed) and otad's words about it.
    public var hold: String
    public var detail: String
    public var security: Bool
    /// The window a central asked for, as clock times; nil: none.
    public var window: String?
  }

  public struct Answer: Codable, Equatable, Sendable {
    public var version: String
    /// accept, postpone or decline.
    public var decision: String
    /// A postponement's end, as a clock time.
    public var until: String?
  }

  public var consentRequired: Bool
  public var locks: [Lock]
  public var kept: Kept?
  public var answer: Answer?

  public init(_ activation: ActivationStatus) {
    consentRequired = activation.consentRequired
    locks = activation.locks.map { Lock(holder: $0.holder, state: $0.state, reason: $0.reason) }
    kept = activation.kept.map { kept in
      Kept(
        version: kept.version, kind: kept.kind, hold: kept.hold, detail: kept.detail, security: kept.security,
        window: Self.window(from: kept.notBefore, to: kept.notAfter))
    }
    answer = activation.consent.map { answer in
      Answer(version: answer.version, decision: answer.decision, until: answer.until.map(Self.clock))
    }
  }

  /// Whether some lock holds now.
  public var locked: Bool { locks.contains { $0.state == "holding" } }

  /// "from 14:00:00 UTC to 15:00:00 UTC", "from …", "until …"; nil without either end.
  static func window(from start: Int64?, to end: Int64?) -> String? {
    switch (start, end) {
    case (let start?, let end?): "from \(clock(start)) to \(clock(end))"
    case (let start?, nil): "from \(clock(start))"
    case (nil, let end?): "until \(clock(end))"
    case (nil, nil): nil
    }
  }

  /// Seconds since 1970 as the time of day in UTC, "14:05:09 UTC" (the lab runs for an afternoon).
  static func clock(_ seconds: Int64) -> String {
    let day = ((seconds % 86_400) + 86_400) % 86_400
    func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(two(day / 3600)):\(two(day / 60 % 60)):\(two(day % 60)) UTC"
  }
}
