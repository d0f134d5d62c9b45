import OTASystem

/// An exclusive advisory lock (flock) on a file in the state directory, held for one read-modify-write
/// of the boot state, so that `otad mark-good` run beside the daemon cannot lose either's change.
public struct StateLock: Sendable {
  public let path: String

  public init(path: String) { self.path = path }

  /// Runs `body` while holding the lock; waits for another holder to finish.
  public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(StorageError) -> Result<T, E> {
    let file = try POSIXFile.open(path, flags: POSIXFile.readWriteCreate, mode: 0o600)
    defer { try? file.close() }
    try storage { () throws(SystemError) in try file.descriptor.lockExclusively() }
    return Result { () throws(E) in try body() }
  }
}
