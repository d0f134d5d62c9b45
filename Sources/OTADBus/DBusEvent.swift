/// What `DBusConnection.process()` hands back to the loop: plain `Sendable` values, so the loop may
/// pass them on to anything, while the connection itself stays on its thread.
public enum DBusEvent: Sendable, Equatable {
  /// The answer to a call started with `startCall`: its values, or the error reply (a timeout is
  /// `org.freedesktop.DBus.Error.NoReply`, a lost connection `.disconnected`).
  case reply(DBusSerial, Result<[DBusValue], DBusError>)
  /// A signal that reached this connection (through a match rule, or addressed to it).
  case signal(DBusSignal)
  /// The connection is gone: stop polling its descriptor.
  case disconnected
}

/// A received signal.
public struct DBusSignal: Sendable, Equatable {
  /// The unique name of the sender (":1.42"), nil on a peer-to-peer connection.
  public var sender: String?
  public var path: DBusObjectPath
  public var interface: String
  public var member: String
  public var arguments: [DBusValue]

  public init(
    sender: String?, path: DBusObjectPath, interface: String, member: String, arguments: [DBusValue]
  ) {
    self.sender = sender
    self.path = path
    self.interface = interface
    self.member = member
    self.arguments = arguments
  }
}

/// A method call as a handler of an exported object sees it.
public struct DBusMethodCall: Sendable, Equatable {
  /// The unique name of the caller.
  public var sender: String?
  public var path: DBusObjectPath
  /// The interface named in the call; nil when the caller left it out.
  public var interface: String?
  public var member: String
  /// The arguments, already checked against the method's declared input signature.
  public var arguments: [DBusValue]
  public var serial: DBusSerial
}

/// A match rule for `DBusConnection.addMatch`: which signals the bus should route to this connection.
/// Built from fields so that quoting is done once, right.
public struct DBusMatchRule: Sendable, Hashable, CustomStringConvertible {
  /// The rule text as the bus reads it ("type='signal',interface='org.freedesktop.DBus.Properties'").
  public let rawValue: String

  public init(rawValue: String) { self.rawValue = rawValue }

  /// Signals, narrowed by whichever fields are given. `pathNamespace` matches a path and everything
  /// below it; `arg0` matches the first argument when it is a string (e.g. the interface name of
  /// `PropertiesChanged`).
  public static func signals(
    sender: String? = nil, path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil,
    interface: String? = nil, member: String? = nil, arg0: String? = nil
  ) -> DBusMatchRule {
    let fields: [(String, String?)] = [
      ("type", "signal"), ("sender", sender), ("path", path?.rawValue),
      ("path_namespace", pathNamespace?.rawValue), ("interface", interface), ("member", member),
      ("arg0", arg0),
    ]
    let text = fields.compactMap { key, value in value.map { "\(key)=\(quote($0))" } }.joined(separator: ",")
    return DBusMatchRule(rawValue: text)
  }

  public var description: String { rawValue }

  /// Quotes a match value: inside single quotes nothing is special, and a quote itself is written
  /// as '\'' (close, escaped quote, reopen), as the D-Bus specification describes.
  private static func quote(_ value: String) -> String {
    "'" + value.replacing("'", with: "'\\''") + "'"
  }
}
