import CDBus

/// The serial number of a sent message; a reply names it as its reply serial.
public typealias DBusSerial = UInt32

/// A libdbus message: owns one reference and drops it when released. Not `Sendable`: it belongs to
/// the thread that owns its connection. Most code never sees one (`DBusConnection` builds and reads
/// them); it is public for building a message by hand and for marshalling without a bus.
public final class DBusMessage {
  let pointer: OpaquePointer

  /// Takes over one reference to `pointer` (from a `dbus_message_new_*` call).
  init(owning pointer: OpaquePointer) { self.pointer = pointer }

  /// Adds a reference to `pointer` (one libdbus lends to a callback) and owns that.
  convenience init(retaining pointer: OpaquePointer) {
    self.init(owning: dbus_message_ref(pointer))
  }

  deinit { dbus_message_unref(pointer) }

  /// What kind of message this is.
  public enum Kind: Equatable, Sendable {
    case methodCall, methodReturn, error, signal, other(Int32)
  }

  /// A method call to `method` of `interface` on the object at `path` of `destination`. The
  /// destination may be nil on a peer-to-peer connection; the interface may be nil, as D-Bus allows.
  public static func methodCall(
    destination: String?, path: DBusObjectPath, interface: String?, method: String
  ) throws(DBusError) -> DBusMessage {
    if let destination { try DBusSyntax.busName(destination) }
    try DBusSyntax.path(path)
    if let interface { try DBusSyntax.interface(interface) }
    try DBusSyntax.member(method)
    let pointer = destination.withOptionalCString { destination in
      interface.withOptionalCString { interface in
        dbus_message_new_method_call(destination, path.rawValue, interface, method)
      }
    }
    guard let pointer else { throw .outOfMemory }
    return DBusMessage(owning: pointer)
  }

  /// A signal `name` of `interface`, sent from the object at `path`.
  public static func signal(path: DBusObjectPath, interface: String, name: String) throws(DBusError)
    -> DBusMessage
  {
    try DBusSyntax.path(path)
    try DBusSyntax.interface(interface)
    try DBusSyntax.member(name)
    guard let pointer = dbus_message_new_signal(path.rawValue, interface, name) else { throw .outOfMemory }
    return DBusMessage(owning: pointer)
  }

  /// The successful reply to this method call.
  func methodReturn() throws(DBusError) -> DBusMessage {
    guard let pointer = dbus_message_new_method_return(pointer) else { throw .outOfMemory }
    return DBusMessage(owning: pointer)
  }

  /// The error reply to this method call. A name that is not a valid error name becomes
  /// `org.freedesktop.DBus.Error.Failed` (libdbus would refuse it), keeping the message.
  func errorReply(_ error: DBusError) throws(DBusError) -> DBusMessage {
    let name = DBusSyntax.isErrorName(error.name) ? error.name : DBusError.Name.failed
    let text = error.message.utf8.contains(0) ? error.message.replacing("\0", with: " ") : error.message
    guard let reply = dbus_message_new_error(pointer, name, text) else { throw .outOfMemory }
    return DBusMessage(owning: reply)
  }

  public var kind: Kind {
    switch dbus_message_get_type(pointer) {
    case cdbus_message_type_method_call: .methodCall
    case cdbus_message_type_method_return: .methodReturn
    case cdbus_message_type_error: .error
    case cdbus_message_type_signal: .signal
    case let other: .other(other)
    }
  }

  /// The serial libdbus gave the message when it was sent (0 before).
  public var serial: DBusSerial { dbus_message_get_serial(pointer) }
  /// For a reply, the serial of the call it answers.
  public var replySerial: DBusSerial { dbus_message_get_reply_serial(pointer) }
  public var sender: String? { dbus_message_get_sender(pointer).map { String(cString: $0) } }
  public var destination: String? { dbus_message_get_destination(pointer).map { String(cString: $0) } }
  public var path: DBusObjectPath? {
    dbus_message_get_path(pointer).map { DBusObjectPath(String(cString: $0)) }
  }
  public var interface: String? { dbus_message_get_interface(pointer).map { String(cString: $0) } }
  public var member: String? { dbus_message_get_member(pointer).map { String(cString: $0) } }
  public var errorName: String? { dbus_message_get_error_name(pointer).map { String(cString: $0) } }
  /// The signature of the body.
  public var signature: DBusSignature {
    DBusSignature(dbus_message_get_signature(pointer).map { String(cString: $0) } ?? "")
  }
  /// Whether the sender of this call waits for a reply (it did not set NO_REPLY_EXPECTED).
  public var expectsReply: Bool { dbus_message_get_no_reply(pointer) == 0 }
  /// Whether the body holds Unix file descriptors, at any depth (inside variants too).
  public var containsFileDescriptors: Bool { dbus_message_contains_unix_fds(pointer) != 0 }

  /// Appends `values` to the body. Every value is checked first, so on a thrown error the message is
  /// as it was.
  public func append(_ values: [DBusValue]) throws(DBusError) {
    for value in values { try value.validate() }
    let iterator = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
    defer { iterator.deallocate() }
    dbus_message_iter_init_append(pointer, iterator)
    for value in values { try value.append(to: iterator) }
  }

  /// The values in the body, in order. Descriptors among them are fresh duplicates (see
  /// `DBusFileDescriptor`): reading twice gives two sets.
  public func arguments() throws(DBusError) -> [DBusValue] {
    let iterator = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
    defer { iterator.deallocate() }
    guard dbus_message_iter_init(pointer, iterator) != 0 else { return [] }
    return try DBusValue.readAll(iterator)
  }

  /// The values in the body, after checking that the body has exactly `signature`.
  public func arguments(expecting signature: DBusSignature) throws(DBusError) -> [DBusValue] {
    let found = self.signature
    guard found == signature else { throw .typeMismatch(expected: signature.rawValue, found: found.rawValue) }
    return try arguments()
  }

  /// For an error message, its name and message as a `DBusError`.
  func error() -> DBusError {
    let text = (try? arguments()).flatMap { $0.first?.stringValue } ?? ""
    return .named(errorName ?? DBusError.Name.failed, message: text)
  }
}

extension Optional<String> {
  /// Like `withCString`, passing NULL for nil: libdbus's way of saying "absent".
  func withOptionalCString<Result>(_ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    switch self {
    case .some(let string): string.withCString { body($0) }
    case .none: body(nil)
    }
  }
}
