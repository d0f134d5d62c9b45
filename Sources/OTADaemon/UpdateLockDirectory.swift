import Logging
import OTAReceiverHost
import OTASystem

/// The update locks as the lock directory holds them (docs/OTAD.md, "The device has a say"), and
/// the system's wall clock: what otad weighs an activation against. Each `NAME.lock` file is one
/// holder's lock. A lock whose process is gone, whose deadline passed, or that does not parse holds
/// nothing (`otad status` lists the last two as stale or unreadable): a crashed application never
/// leaves the device unable to update.
public struct UpdateLockDirectory: ActivationSurroundings {
  public static let defaultPath = "/run/blueota/locks"
  public static let suffix = ".lock"
  /// The most bytes a lock file may have.
  static let sizeLimit = 4096

  public let path: String
  let logger: Logger

  public init(path: String, logger: Logger) {
    self.path = path
    self.logger = logger
  }

  public func wallClock() -> Int64 { Int64(ProcessEnvironment.wallClockMicroseconds / 1_000_000) }

  /// The locks that hold now: parsed, their process alive (or none named), their deadline ahead.
  public func updateLocks() -> [UpdateLock] {
    survey().compactMap { if case .holding(let lock) = $0.state { lock } else { nil } }
  }

  /// Every lock file and what it is: for `otad status` and the log.
  public func survey() -> [LockFile] {
    guard let names = try? FileSystem.directoryEntries(path) else { return [] }
    let now = wallClock()
    return names.filter { $0.hasSuffix(Self.suffix) && !$0.hasPrefix(".") }.prefix(64).map { name in
      let holder = String(name.dropLast(Self.suffix.count))
      let file = "\(path)/\(name)"
      guard let bytes = try? FileSystem.readSmallRegularFile(file, limit: Self.sizeLimit),
        let lock = ActivationRecords.parseLock(holder: holder, bytes)
      else {
        logger.debug(
          "update lock \(file) is not one otad understands (a regular file of pid=, reason=, until= lines, with a pid or a deadline): it holds nothing"
        )
        return LockFile(holder: holder, state: .unreadable)
      }
      if let pid = lock.pid, !ProcessEnvironment.processExists(pid) {
        return LockFile(holder: holder, state: .stale(lock, "its process \(pid) is gone"))
      }
      if !lock.holds(at: now) { return LockFile(holder: holder, state: .stale(lock, "its deadline passed")) }
      return LockFile(holder: holder, state: .holding(lock))
    }
  }
}

/// One file of the lock directory and what it says.
public struct LockFile: Equatable, Sendable {
  public enum State: Equatable, Sendable {
    case holding(UpdateLock)
    /// A lock that holds nothing any more, and why.
    case stale(UpdateLock, String)
    case unreadable
  }
  public var holder: String
  public var state: State
}
