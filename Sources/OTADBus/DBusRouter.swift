import CDBus

/// What libdbus calls back into while `DBusConnection.process()` dispatches: the message filter
/// (replies to calls started with `startCall`, signals, the local Disconnected signal) and the
/// fallback object handler at "/" (method calls to exported objects).
///
/// A class of its own, apart from `DBusConnection`, so that libdbus can hold it: each registration
/// retains it through an `Unmanaged` context pointer, and libdbus's free and unregister callbacks
/// release it. It is touched only on the connection's thread, inside `process()` or the
/// connection's own methods.
final class DBusRouter {
  /// The libdbus connection, until `DBusConnection.close()`.
  var connection: OpaquePointer?
  var tree = DBusObjectTree()
  /// Events gathered during dispatch, handed out by `process()`.
  var events: [DBusEvent] = []
  /// Calls started with `startCall` that await their reply, with their deadlines.
  var pending: [DBusSerial: ContinuousClock.Instant] = [:]
  /// True while libdbus dispatches: dispatching again, or closing, must wait.
  var isDispatching = false

  init(connection: OpaquePointer) { self.connection = connection }

  // MARK: The filter

  /// Sees every incoming message first. Returns true for what it consumed.
  func filter(_ message: DBusMessage) -> Bool {
    switch message.kind {
    case .methodReturn, .error:
      let serial = message.replySerial
      guard pending.removeValue(forKey: serial) != nil else { return false }
      if message.kind == .error {
        events.append(.reply(serial, .failure(message.error())))
      } else {
        do throws(DBusError) {
          events.append(.reply(serial, .success(try message.arguments())))
        } catch {
          events.append(.reply(serial, .failure(error)))
        }
      }
      return true
    case .signal:
      guard let path = message.path, let interface = message.interface, let member = message.member else {
        return false
      }
      if path == "/org/freedesktop/DBus/Local", interface == "org.freedesktop.DBus.Local",
        member == "Disconnected"
      {
        disconnected()
        return true
      }
      // A signal whose body cannot be read is dropped: there is nothing useful to hand on.
      guard let arguments = try? message.arguments() else { return true }
      events.append(
        .signal(
          DBusSignal(
            sender: message.sender, path: path, interface: interface, member: member, arguments: arguments))
      )
      return true
    default:
      return false
    }
  }

  /// Fails every call still waiting, then reports the loss once.
  func disconnected() {
    for serial in pending.keys.sorted() { events.append(.reply(serial, .failure(.disconnected))) }
    pending = [:]
    if events.last != .disconnected { events.append(.disconnected) }
  }

  /// Turns calls whose deadline has passed into `NoReply` errors. libdbus would time them out only
  /// with main-loop timeout integration, which a poll loop does not provide.
  func expire(now: ContinuousClock.Instant) {
    for (serial, deadline) in pending.sorted(by: { $0.key < $1.key }) where deadline <= now {
      pending[serial] = nil
      events.append(.reply(serial, .failure(.named(DBusError.Name.noReply, message: "no reply in time"))))
    }
  }

  func takeEvents() -> [DBusEvent] {
    defer { events = [] }
    return events
  }

  // MARK: Sending

  /// Queues `message` (libdbus writes at once when it can) and returns its serial.
  @discardableResult
  func send(_ message: DBusMessage) throws(DBusError) -> DBusSerial {
    guard let connection, dbus_connection_get_is_connected(connection) != 0 else { throw .disconnected }
    if message.containsFileDescriptors, dbus_connection_can_send_type(connection, cdbus_type_unix_fd) == 0 {
      throw .fileDescriptorsUnsupported
    }
    var serial: DBusSerial = 0
    guard dbus_connection_send(connection, message.pointer, &serial) != 0 else { throw .outOfMemory }
    return serial
  }

  func emit(
    signal name: String, interface: String, path: DBusObjectPath, arguments: [DBusValue]
  ) throws(DBusError) {
    let message = try DBusMessage.signal(path: path, interface: interface, name: name)
    try message.append(arguments)
    try send(message)
  }

  func emitPropertiesChanged(
    path: DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String]
  ) throws(DBusError) {
    try emit(
      signal: "PropertiesChanged", interface: DBusStandardInterface.properties, path: path,
      arguments: [.string(interface), .vardict(changed), .strings(invalidated)])
  }
}

// MARK: C callbacks

extension DBusRouter {
  /// The message filter libdbus calls; its context is a retained router.
  static let filterFunction: DBusHandleMessageFunction = { _, message, context in
    guard let message, let context else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    let router = Unmanaged<DBusRouter>.fromOpaque(context).takeUnretainedValue()
    let handled = router.filter(DBusMessage(retaining: message))
    return handled ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
  }

  /// The object handler libdbus calls for every path (it is registered as the fallback at "/").
  static let objectFunction: DBusObjectPathMessageFunction = { _, message, context in
    guard let message, let context else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    let router = Unmanaged<DBusRouter>.fromOpaque(context).takeUnretainedValue()
    let handled = router.handleMethodCall(DBusMessage(retaining: message))
    return handled ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
  }

  /// Releases the retain a filter registration holds (libdbus calls it on remove_filter).
  static let releaseFunction: DBusFreeFunction = { context in
    guard let context else { return }
    Unmanaged<DBusRouter>.fromOpaque(context).release()
  }

  /// Releases the retain the object registration holds (libdbus calls it on unregister).
  static let unregisterFunction: DBusObjectPathUnregisterFunction = { _, context in
    guard let context else { return }
    Unmanaged<DBusRouter>.fromOpaque(context).release()
  }
}
