#if canImport(Glibc)
  import Glibc
#endif

/// A Unix file descriptor carried by a message (D-Bus type 'h'), owned by this object and closed when
/// the last reference to it goes away. A class, so that a value holding one can be copied freely
/// while the descriptor is closed exactly once.
///
/// Ownership:
/// - Received: every descriptor read out of a message is a fresh duplicate that libdbus made for the
///   reader, so it arrives wrapped here and is closed with the last reference. To keep it longer than
///   the value, take your own copy with `duplicate()`.
/// - Sent: libdbus duplicates the descriptor into the message while marshalling, so the wrapped one
///   stays this object's. Wrap one you own with `init(taking:)` (it is closed when the value goes,
///   usually right after the reply is sent), or one you keep with `init(duplicating:)`.
public final class DBusFileDescriptor: Sendable, Equatable, CustomStringConvertible {
  /// The descriptor number, valid while this object lives. Do not close it.
  public let rawValue: Int32

  /// Takes ownership of `descriptor`: it is closed when this object goes away.
  public init(taking descriptor: Int32) { rawValue = descriptor }

  /// Wraps a close-on-exec duplicate of `descriptor`, which stays the caller's.
  public convenience init(duplicating descriptor: Int32) throws(DBusError) {
    self.init(taking: try Self.duplicate(descriptor))
  }

  deinit { _ = Glibc.close(rawValue) }

  /// A close-on-exec duplicate of the descriptor, owned by the caller (who must close it).
  public func duplicate() throws(DBusError) -> Int32 { try Self.duplicate(rawValue) }

  public var description: String { "fd \(rawValue)" }

  /// Equal when both refer to the same open file (same device and inode): what survives a trip
  /// through a message, where the receiver gets a duplicate with another number.
  public static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool {
    if lhs === rhs { return true }
    var left = stat()
    var right = stat()
    guard fstat(lhs.rawValue, &left) == 0, fstat(rhs.rawValue, &right) == 0 else { return false }
    return left.st_dev == right.st_dev && left.st_ino == right.st_ino
  }

  private static func duplicate(_ descriptor: Int32) throws(DBusError) -> Int32 {
    let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
    guard copy >= 0 else { throw .system(operation: "duplicating descriptor \(descriptor)", errno: errno) }
    return copy
  }
}
