/// One fault an app team asks the device for (docs/APP-TESTING.md): what it does, where in an
/// update it is due, and how often it fires. Written and read as one line of words, the same in
/// the configuration, on otad's command line and through its fault control:
///
///     drop-link after=37%
///     refuse at=activate status=busy times=always
///     delay by=2s at=window chance=0.3 seed=7
///
/// A fault fails an update at most: it acts on the link and the answers, or on the slot being
/// written, never on the running slot, the boot state or the journal.
public struct Fault: Equatable, Sendable, CustomStringConvertible {
  public enum Action: Equatable, Sendable {
    /// The device drops the central (over UDP, which has no link, the request is lost).
    case dropLink
    /// The request is answered with this status (the OTA protocol's status byte) or MCUmgr `rc`
    /// (SMP), and not carried out.
    case refuse(status: UInt8)
    /// The answer goes this much later (and any answer after it, to keep their order).
    case delay(Duration)
    /// The data write (an OTA chunk or operation, an SMP upload) is dropped as if lost on the air.
    case loseChunk
    /// One byte of the data write's image bytes is flipped before the device takes it.
    case corruptChunk
    /// A clean restart, as after ACTIVATE (the configured restart: re-exec, reboot or a command).
    case restart
    /// A power cut: otad kills itself (SIGKILL), whatever it was doing.
    case powerCut
    /// The next trial's health check fails (whether or not one is configured).
    case failHealthCheck
    /// The next write to the slot being written fails with ENOSPC, through the device's own
    /// storage-failure path.
    case storageFull

    /// The action's name in a fault's line.
    public var name: String {
      switch self {
      case .dropLink: "drop-link"
      case .refuse: "refuse"
      case .delay: "delay"
      case .loseChunk: "lose-chunk"
      case .corruptChunk: "corrupt-chunk"
      case .restart: "restart"
      case .powerCut: "power-cut"
      case .failHealthCheck: "fail-health-check"
      case .storageFull: "storage-full"
      }
    }
  }

  /// How far the image must have come: bytes from its start, or a share of its size.
  public enum Point: Equatable, Sendable, CustomStringConvertible {
    case bytes(UInt64)
    case percent(UInt8)

    /// The point in bytes for an image of `size`; nil when a share is asked of an unknown size.
    public func bytes(ofImage size: UInt64?) -> UInt64? {
      switch self {
      case .bytes(let count): count
      case .percent(let share): size.map { $0 * UInt64(share) / 100 }
      }
    }

    public var description: String {
      switch self {
      case .bytes(let count): "\(count)"
      case .percent(let share): "\(share)%"
      }
    }
  }

  /// How often a fault fires when it is due.
  public enum Firing: Equatable, Sendable, CustomStringConvertible {
    /// This many times, then it is spent.
    case times(UInt32)
    /// Every time it is due.
    case always
    /// Each time it is due, with this chance in a million, drawn from a seeded generator; at most
    /// `times` times (nil: without end).
    case chance(perMillion: UInt32, seed: UInt64, times: UInt32?)

    public var description: String {
      switch self {
      case .times(let count): "times=\(count)"
      case .always: "times=always"
      case .chance(let perMillion, let seed, let times):
        "chance=\(FaultText.fraction(perMillion)) seed=\(seed)" + (times.map { " times=\($0)" } ?? "")
      }
    }
  }

  public var action: Action
  /// The request it is due on; nil: it is due on data (`after`), on every answer (delay) or at the
  /// next trial (fail-health-check).
  public var request: FaultRequest?
  /// How far the image must have come first; nil: from its start.
  public var after: Point?
  public var firing: Firing

  public init(
    _ action: Action, at request: FaultRequest? = nil, after: Point? = nil, firing: Firing = .times(1)
  ) {
    self.action = action
    self.request = request
    self.after = after
    self.firing = firing
  }

  /// The canonical line: the action, then its settings in a fixed order (what `list` shows and the
  /// state file keeps).
  public var description: String {
    var words = [action.name]
    switch action {
    case .refuse(let status):
      if request?.isSMP == true {
        words.append("rc=\(status)")
      } else if request?.isNordic == true {
        words.append("status=\(FaultText.nordicStatusName(status))")
      } else if request?.isSecureDFU == true {
        words.append("status=\(FaultText.secureDFUResultName(status))")
      } else {
        words.append("status=\(FaultText.statusName(status))")
      }
    case .delay(let duration): words.append("by=\(FaultText.duration(duration))")
    default: break
    }
    if let request { words.append("at=\(request.name)") }
    if let after { words.append("after=\(after)") }
    words.append("\(firing)")
    return words.joined(separator: " ")
  }
}
