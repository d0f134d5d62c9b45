import OTASystem

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
  /// The owned descriptor (OTASystem closes it once, when the last reference goes).
  public let file: FileDescriptor
  /// The descriptor number, valid while this object lives. Do not close it.
  public var rawValue: Int32 { file.rawValue }

  /// Takes ownership of `file`.
  public init(_ file: FileDescriptor) { self.file = file }

  /// Takes ownership of `descriptor`: it is closed when this object goes away.
  public convenience init(taking descriptor: Int32) {
    self.init(FileDescriptor(taking: descriptor, path: "D-Bus descriptor"))
  }

  /// Wraps a close-on-exec duplicate of `descriptor`, which stays the caller's.
  public convenience init(duplicating descriptor: Int32) throws(DBusError) {
    do {
      self.init(try FileDescriptor.duplicating(descriptor, path: "D-Bus descriptor"))
    } catch {
      throw .system(operation: "duplicating descriptor \(descriptor)", errno: error.errno)
    }
  }

  /// A close-on-exec duplicate of the descriptor, owned by the caller.
  public func duplicate() throws(DBusError) -> FileDescriptor { try Self.duplicate(file) }

  public var description: String { "fd \(rawValue)" }

  /// Equal when both refer to the same open file (same device and inode): what survives a trip
  /// through a message, where the receiver gets a duplicate with another number.
  public static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool {
    if lhs === rhs { return true }
    guard let left = try? lhs.file.status(), let right = try? rhs.file.status() else { return false }
    return left.device == right.device && left.inode == right.inode
  }

  private static func duplicate(_ file: FileDescriptor) throws(DBusError) -> FileDescriptor {
    do {
      return try file.duplicate()
    } catch {
      throw .system(operation: "duplicating descriptor \(file.rawValue)", errno: error.errno)
    }
  }
}
