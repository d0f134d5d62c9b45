/// Whose writes a Nordic DFU service takes: the central whose session it serves. While that
/// session is under way and its central wrote within `leaseTimeout`, another central's writes are
/// refused (the session goes on: nobody ends a session it does not own); a session that is idle, or
/// whose central went quiet, is taken over by the next central that writes. Only the owner's
/// departure ends the session. Pure: time is given.
public struct NordicDFUCentralGate: Equatable, Sendable {
  public enum Decision: Equatable, Sendable {
    /// The owner's write, or the first central's.
    case admit
    /// A new central takes the service over: `previous`'s session ends now.
    case takeOver(previous: String)
    /// Another central holds the session: dropped (the `refused`-th since that central took it).
    case refuse(owner: String, refused: Int)
  }

  public private(set) var owner: String?
  private var lastWrite: Duration = .zero
  private var refused = 0
  public let leaseTimeout: Duration

  public init(leaseTimeout: Duration = .seconds(30)) {
    self.leaseTimeout = leaseTimeout
  }

  /// A write from `central` at `now`; `sessionActive`: the service's session is under way.
  public mutating func admit(_ central: String, now: Duration, sessionActive: Bool) -> Decision {
    guard let owner, owner != central else {
      if owner == nil { refused = 0 }
      self.owner = central
      lastWrite = now
      return .admit
    }
    if sessionActive, now - lastWrite < leaseTimeout {
      refused += 1
      return .refuse(owner: owner, refused: refused)
    }
    self.owner = central
    lastWrite = now
    refused = 0
    return .takeOver(previous: owner)
  }

  /// `central` disconnected: true when it was the owner (its session ends; the service is free).
  public mutating func gone(_ central: String) -> Bool {
    guard owner == central else { return false }
    owner = nil
    return true
  }

  /// The owner is dropped (a fault asked for it): who it was.
  public mutating func release() -> String? {
    defer { owner = nil }
    return owner
  }
}
