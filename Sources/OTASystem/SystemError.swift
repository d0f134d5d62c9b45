/// A failed system call: which call, on what (a path, or a description such as "socket"), and the
/// errno. Targets above map it into their own typed errors (StorageError, LinkError, ...).
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
  public let operation: String
  public let path: String
  public let errno: Errno

  public init(operation: String, path: String, errno: Errno) {
    self.operation = operation
    self.path = path
    self.errno = errno
  }

  /// `pwrite /var/lib/otad/b.img: File too large (errno 27)`.
  public var description: String {
    let subject = path.isEmpty ? operation : "\(operation) \(path)"
    return "\(subject): \(errno) (errno \(errno.rawValue))"
  }
}
