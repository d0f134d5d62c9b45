import CDBus
import OTASystem

/// Why a D-Bus operation failed.
///
/// `.named` is a D-Bus error proper: an error reply from a peer, a failure libdbus reports by name
/// (`NoReply` on a timeout, `ServiceUnknown`), or what a method handler throws to answer a call with
/// an error. The other cases are local failures found before anything went on the wire; each still
/// has a standard D-Bus `name`, so a handler that lets one escape answers with a sensible error.
public enum DBusError: Error, Equatable, Sendable {
  /// A D-Bus error: its name (e.g. "org.bluez.Error.InvalidValueLength") and message.
  case named(String, message: String)
  /// A value read from a message, or passed in, did not have the D-Bus type that was required.
  case typeMismatch(expected: String, found: String)
  /// A value, name, path or signature that D-Bus cannot carry (an embedded NUL, a malformed path,
  /// array elements of another type than the array's).
  case invalidValue(String)
  /// libdbus could not allocate memory.
  case outOfMemory
  /// The connection is closed or the peer went away.
  case disconnected
  /// A message holds a Unix file descriptor, but the transport cannot pass descriptors.
  case fileDescriptorsUnsupported
  /// A system call failed (duplicating a descriptor).
  case system(operation: String, errno: Errno)

  /// The D-Bus error name: the carried one for `.named`, a standard one for local failures.
  public var name: String {
    switch self {
    case .named(let name, _): name
    case .typeMismatch, .invalidValue: Name.invalidArgs
    case .outOfMemory: Name.noMemory
    case .disconnected: Name.disconnected
    case .fileDescriptorsUnsupported: Name.notSupported
    case .system: Name.failed
    }
  }

  /// A human-readable explanation, used as the message of an error reply.
  public var message: String {
    switch self {
    case .named(_, let message): message
    case .typeMismatch(let expected, let found): "expected D-Bus type '\(expected)', found '\(found)'"
    case .invalidValue(let reason): reason
    case .outOfMemory: "out of memory"
    case .disconnected: "not connected"
    case .fileDescriptorsUnsupported: "this connection cannot pass Unix file descriptors"
    case .system(let operation, let code): "\(operation) failed: \(code) (errno \(code.rawValue))"
    }
  }

  /// Standard error names from the D-Bus specification, and the ones this wrapper answers with.
  public enum Name {
    public static let failed = "org.freedesktop.DBus.Error.Failed"
    public static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let objectPathInUse = "org.freedesktop.DBus.Error.ObjectPathInUse"
  }

  /// `org.freedesktop.DBus.Error.Failed` with `message`: the catch-all answer of a handler.
  public static func failed(_ message: String) -> DBusError { .named(Name.failed, message: message) }

  /// `org.freedesktop.DBus.Error.InvalidArgs` with `message`: the caller sent something unusable.
  public static func invalidArgs(_ message: String) -> DBusError {
    .named(Name.invalidArgs, message: message)
  }
}

extension DBusError {
  /// Runs `body` with a fresh libdbus error and turns a set one into `.named`. `body` returns nil for
  /// a failure libdbus did not describe, which becomes `.outOfMemory` (libdbus's only silent failure).
  static func capturing<T>(
    _ body: (UnsafeMutablePointer<CDBus.DBusError>) -> T?
  ) throws(DBusError) -> T {
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    let result = body(&error)
    if dbus_error_is_set(&error) != 0 {
      let name = error.name.map { String(cString: $0) } ?? Name.failed
      let message = error.message.map { String(cString: $0) } ?? ""
      throw .named(name, message: message)
    }
    guard let result else { throw .outOfMemory }
    return result
  }
}
