import CDBus

/// A connection to a message bus, for a single-threaded poll loop.
///
/// Not `Sendable`: every libdbus call on it happens on the thread that owns it (the loop's), which
/// is what keeps libdbus's internal locking out of the picture. What comes out of it (`DBusValue`,
/// `DBusEvent`, `DBusError`) is `Sendable` and may go anywhere.
///
/// The loop polls `descriptor` for reading with `pollTimeout` as its longest wait, then calls
/// `process()`, which reads, dispatches (answering calls to exported objects through their
/// handlers) and writes without blocking, and returns the replies and signals that arrived:
///
/// ```swift
/// let bus = try DBusConnection(bus: .system)
/// let serial = try bus.startCall(
///   destination: "org.bluez", path: "/", interface: DBusStandardInterface.objectManager,
///   method: "GetManagedObjects")
/// while running {
///   _ = try Poller.wait(for: [bus.descriptor], timeout: bus.pollTimeout)
///   for event in bus.process() {
///     if case .reply(serial, let result) = event { … }
///   }
/// }
/// ```
public final class DBusConnection {
  /// The well-known buses.
  public enum Bus: Sendable {
    case system, session
  }

  /// Flags for `requestName`.
  public struct NameFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Let another connection take the name over with `replaceExisting`.
    public static let allowReplacement = NameFlags(rawValue: cdbus_name_flag_allow_replacement)
    /// Take the name over from an owner that allowed replacement.
    public static let replaceExisting = NameFlags(rawValue: cdbus_name_flag_replace_existing)
    /// Fail instead of waiting in the queue for the name.
    public static let doNotQueue = NameFlags(rawValue: cdbus_name_flag_do_not_queue)
  }

  /// The bus's answer to `requestName`.
  public enum NameReply: Sendable, Equatable {
    case primaryOwner, inQueue, exists, alreadyOwner
  }

  let pointer: OpaquePointer
  let router: DBusRouter
  /// The unique name the bus gave this connection (":1.42").
  public let uniqueName: String
  /// The socket to poll for reading. Owned by libdbus; after `.disconnected` or `close()`, stop
  /// polling it.
  public let descriptor: Int32
  private let filterContext: UnsafeMutableRawPointer
  private var objectsRegistered = false
  private var closed = false
  private var closeRequested = false
  private let clock = ContinuousClock()

  /// Connects to the system or session bus (on a private connection of its own, so closing it
  /// affects nobody else in the process).
  public convenience init(bus: Bus) throws(DBusError) {
    let type = bus == .system ? DBUS_BUS_SYSTEM : DBUS_BUS_SESSION
    let pointer = try DBusError.capturing { dbus_bus_get_private(type, $0) }
    try self.init(opened: pointer)
  }

  /// Connects to the bus at `address` ("unix:path=/run/dbus/system_bus_socket", or what
  /// `dbus-daemon --print-address` printed) and registers with it (Hello).
  public convenience init(address: String) throws(DBusError) {
    guard !address.utf8.contains(0) else { throw .invalidValue("address contains a NUL byte") }
    let pointer = try DBusError.capturing { dbus_connection_open_private(address, $0) }
    do throws(DBusError) {
      try DBusError.capturing { dbus_bus_register(pointer, $0) != 0 ? () : nil }
    } catch {
      dbus_connection_close(pointer)
      dbus_connection_unref(pointer)
      throw error
    }
    try self.init(opened: pointer)
  }

  /// Takes over an open, registered private connection; closes it if it cannot be used.
  private init(opened pointer: OpaquePointer) throws(DBusError) {
    // dbus_bus_get_private sets exit-on-disconnect, which would end the whole process.
    dbus_connection_set_exit_on_disconnect(pointer, 0)
    var descriptor: Int32 = -1
    let router = DBusRouter(connection: pointer)
    let context = Unmanaged.passRetained(router).toOpaque()
    guard dbus_connection_get_unix_fd(pointer, &descriptor) != 0,
      let name = dbus_bus_get_unique_name(pointer),
      dbus_connection_add_filter(pointer, DBusRouter.filterFunction, context, DBusRouter.releaseFunction) != 0
    else {
      Unmanaged<DBusRouter>.fromOpaque(context).release()
      dbus_connection_close(pointer)
      dbus_connection_unref(pointer)
      throw .disconnected
    }
    self.pointer = pointer
    self.router = router
    self.filterContext = context
    self.descriptor = descriptor
    self.uniqueName = String(cString: name)
  }

  deinit { close() }

  /// Closes the connection and frees it; later calls throw `.disconnected`. From inside a method
  /// handler, the close happens when `process()` has finished dispatching.
  public func close() {
    guard !closed else { return }
    guard !router.isDispatching else {
      closeRequested = true
      return
    }
    closed = true
    if objectsRegistered { dbus_connection_unregister_object_path(pointer, "/") }
    dbus_connection_remove_filter(pointer, DBusRouter.filterFunction, filterContext)
    router.connection = nil
    router.pending = [:]
    dbus_connection_close(pointer)
    dbus_connection_unref(pointer)
  }

  /// Whether the connection is still up.
  public var isConnected: Bool { !closed && dbus_connection_get_is_connected(pointer) != 0 }

  // MARK: The loop

  /// Reads what has arrived, dispatches it and writes what is queued, all without blocking, and
  /// returns the replies to `startCall`s (including timed-out ones) and the signals received. Calls
  /// to exported objects are answered in here, by their handlers. Call it after every wake-up of
  /// the loop, whether or not `descriptor` was readable. Does nothing when called from a handler.
  public func process() -> [DBusEvent] {
    guard !closed, !router.isDispatching else { return [] }
    router.isDispatching = true
    // A few rounds: answering may queue output, and reading may leave whole messages behind.
    for _ in 0..<4 {
      _ = dbus_connection_read_write(pointer, 0)
      while dbus_connection_dispatch(pointer) == DBUS_DISPATCH_DATA_REMAINS {}
      let moreToRead = dbus_connection_get_dispatch_status(pointer) == DBUS_DISPATCH_DATA_REMAINS
      if !moreToRead && dbus_connection_has_messages_to_send(pointer) == 0 { break }
    }
    router.isDispatching = false
    router.expire(now: clock.now)
    let events = router.takeEvents()
    if closeRequested { close() }
    return events
  }

  /// The longest the loop may wait before calling `process()` again: zero when messages are
  /// already waiting inside libdbus (a blocking `call` may have read them), a moment when output is
  /// still queued, the time to the nearest `startCall` deadline, or nil for "until readable".
  public var pollTimeout: Duration? {
    guard !closed else { return nil }
    if dbus_connection_get_dispatch_status(pointer) == DBUS_DISPATCH_DATA_REMAINS { return .zero }
    if dbus_connection_has_messages_to_send(pointer) != 0 { return .milliseconds(1) }
    guard let deadline = router.pending.values.min() else { return nil }
    return max(.zero, deadline - clock.now)
  }

  /// Blocks until everything queued has been written.
  public func flush() {
    guard !closed else { return }
    dbus_connection_flush(pointer)
  }

  /// Writes what is queued, waiting at most `timeout` (a bus that stops reading cannot hold the
  /// caller); true when all of it went out. What arrives meanwhile waits for `process()`.
  @discardableResult
  public func flush(within timeout: Duration) -> Bool {
    guard !closed else { return true }
    let deadline = clock.now + timeout
    while dbus_connection_has_messages_to_send(pointer) != 0 {
      let left = deadline - clock.now
      guard left > .zero, dbus_connection_get_is_connected(pointer) != 0 else { return false }
      _ = dbus_connection_read_write(pointer, max(1, Self.milliseconds(left)))
    }
    return true
  }

  /// The bytes queued for the bus and not written yet.
  public var outgoingBytes: Int { closed ? 0 : Int(dbus_connection_get_outgoing_size(pointer)) }

  // MARK: Names and matches

  /// Asks the bus for a well-known name ("org.blueota.Device").
  @discardableResult
  public func requestName(_ name: String, flags: NameFlags = .doNotQueue) throws(DBusError) -> NameReply {
    try DBusSyntax.busName(name)
    let pointer = try openPointer()
    let code = try DBusError.capturing { error in
      let code = dbus_bus_request_name(pointer, name, flags.rawValue, error)
      return code < 0 ? nil : code
    }
    switch code {
    case cdbus_request_name_reply_primary_owner: return .primaryOwner
    case cdbus_request_name_reply_in_queue: return .inQueue
    case cdbus_request_name_reply_exists: return .exists
    case cdbus_request_name_reply_already_owner: return .alreadyOwner
    default: throw .failed("RequestName answered \(code)")
    }
  }

  /// Gives a well-known name back.
  public func releaseName(_ name: String) throws(DBusError) {
    try DBusSyntax.busName(name)
    let pointer = try openPointer()
    _ = try DBusError.capturing { error in
      let code = dbus_bus_release_name(pointer, name, error)
      return code < 0 ? nil : code
    }
  }

  /// Asks the bus to route the signals `rule` describes to this connection (a blocking round trip).
  public func addMatch(_ rule: DBusMatchRule) throws(DBusError) {
    guard !rule.rawValue.utf8.contains(0) else { throw .invalidValue("match rule contains a NUL byte") }
    let pointer = try openPointer()
    try DBusError.capturing { dbus_bus_add_match(pointer, rule.rawValue, $0) }
  }

  /// Undoes `addMatch`.
  public func removeMatch(_ rule: DBusMatchRule) throws(DBusError) {
    guard !rule.rawValue.utf8.contains(0) else { throw .invalidValue("match rule contains a NUL byte") }
    let pointer = try openPointer()
    try DBusError.capturing { dbus_bus_remove_match(pointer, rule.rawValue, $0) }
  }

  // MARK: Calls

  /// Calls a method and blocks until the reply, the error reply or the timeout (which throws
  /// `org.freedesktop.DBus.Error.NoReply`). For setup; in the loop, use `startCall`. Messages that
  /// arrive meanwhile wait for the next `process()` (`pollTimeout` is then zero).
  public func call(
    destination: String?, path: DBusObjectPath, interface: String?, method: String,
    arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
  ) throws(DBusError) -> [DBusValue] {
    let message = try DBusMessage.methodCall(
      destination: destination, path: path, interface: interface, method: method)
    try message.append(arguments)
    let pointer = try openPointer()
    if message.containsFileDescriptors, dbus_connection_can_send_type(pointer, cdbus_type_unix_fd) == 0 {
      throw .fileDescriptorsUnsupported
    }
    let milliseconds = Self.milliseconds(timeout)
    let reply = try DBusError.capturing {
      dbus_connection_send_with_reply_and_block(pointer, message.pointer, milliseconds, $0)
    }
    return try DBusMessage(owning: reply).arguments()
  }

  /// Starts a method call and returns at once with its serial; the answer arrives from `process()`
  /// as `.reply(serial, result)`, or as a NoReply error once `timeout` has passed.
  @discardableResult
  public func startCall(
    destination: String?, path: DBusObjectPath, interface: String?, method: String,
    arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
  ) throws(DBusError) -> DBusSerial {
    let message = try DBusMessage.methodCall(
      destination: destination, path: path, interface: interface, method: method)
    try message.append(arguments)
    let serial = try router.send(message)
    router.pending[serial] = clock.now + timeout
    return serial
  }

  /// Forgets a call started with `startCall`: its reply, if one still comes, is dropped.
  public func cancel(_ serial: DBusSerial) { router.pending[serial] = nil }

  /// Sends a message built by hand (a call whose reply nobody waits for, a signal) and returns its
  /// serial.
  @discardableResult
  public func send(_ message: DBusMessage) throws(DBusError) -> DBusSerial { try router.send(message) }

  // MARK: Signals

  /// Emits signal `name` of `interface` from the object at `path`.
  public func emit(
    signal name: String, interface: String, path: DBusObjectPath, arguments: [DBusValue] = []
  ) throws(DBusError) {
    try router.emit(signal: name, interface: interface, path: path, arguments: arguments)
  }

  /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` for `interface` at `path`.
  /// (`setProperty` does this for exported properties by itself.)
  public func emitPropertiesChanged(
    path: DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String] = []
  ) throws(DBusError) {
    try router.emitPropertiesChanged(
      path: path, interface: interface, changed: changed, invalidated: invalidated)
  }

  // MARK: Helpers

  private func openPointer() throws(DBusError) -> OpaquePointer {
    guard !closed else { throw .disconnected }
    return pointer
  }

  /// libdbus timeouts are milliseconds in an int; longer ones mean "forever".
  static func milliseconds(_ timeout: Duration) -> Int32 {
    let (seconds, attoseconds) = timeout.components
    let total = seconds.multipliedReportingOverflow(by: 1000)
    guard !total.overflow, total.partialValue < Int64(Int32.max) else { return cdbus_timeout_infinite }
    return Int32(clamping: max(0, total.partialValue + attoseconds / 1_000_000_000_000_000))
  }

  /// Registers the fallback object handler at "/" the first time something is exported.
  func registerObjects() throws(DBusError) {
    guard !objectsRegistered else { return }
    let pointer = try openPointer()
    var vtable = DBusObjectPathVTable()
    vtable.unregister_function = DBusRouter.unregisterFunction
    vtable.message_function = DBusRouter.objectFunction
    let context = Unmanaged.passRetained(router).toOpaque()
    do throws(DBusError) {
      try DBusError.capturing {
        dbus_connection_try_register_fallback(pointer, "/", &vtable, context, $0) != 0 ? () : nil
      }
    } catch {
      Unmanaged<DBusRouter>.fromOpaque(context).release()
      throw error
    }
    objectsRegistered = true
  }
}
