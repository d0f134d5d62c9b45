/// Exported objects, described as plain values: an object is a path with interfaces; an interface has
/// methods (with handlers), properties (with stored values) and signals. The connection answers
/// Introspect, Properties and ObjectManager from these descriptions, so the application writes only
/// its own methods. Not `Sendable`: handlers are closures that run on the connection's thread and
/// may capture that thread's state.

/// A named argument of a method or signal, for the declared signature and the introspection data.
public struct DBusArgument: Sendable, Equatable {
  public var name: String
  public var signature: DBusSignature

  public init(_ name: String, _ signature: DBusSignature) {
    self.name = name
    self.signature = signature
  }
}

/// A method of an exported interface.
public struct DBusMethod {
  /// Answers one call: the reply's values, or a thrown error that becomes the error reply
  /// (`DBusError.named("org.bluez.Error.InvalidValueLength", message: "…")`).
  public typealias Handler = (DBusMethodCall) throws(DBusError) -> [DBusValue]

  public var name: String
  /// The arguments the method takes; a call with another signature is refused with `InvalidArgs`
  /// before the handler runs.
  public var inputs: [DBusArgument]
  /// The values the handler returns; a reply of another signature becomes a `Failed` error.
  public var outputs: [DBusArgument]
  public var handler: Handler

  public init(
    _ name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [], handler: @escaping Handler
  ) {
    self.name = name
    self.inputs = inputs
    self.outputs = outputs
    self.handler = handler
  }
}

/// A property of an exported interface. The connection stores its value: `Get` and `GetAll` read
/// it, `DBusConnection.setProperty` changes it (emitting `PropertiesChanged`), and a peer's `Set`
/// goes through `onSet` first. Its D-Bus type is the type of the initial value, fixed from then on.
public struct DBusProperty {
  /// Who may do what, as introspection spells it.
  public enum Access: String, Sendable {
    case read
    case write
    case readWrite = "readwrite"
  }

  /// Runs when a peer sets the property; throw to refuse (the value is then unchanged).
  public typealias SetHandler = (DBusValue) throws(DBusError) -> Void

  public var name: String
  public var value: DBusValue
  public var access: Access
  /// Whether changes are announced with `PropertiesChanged` (BlueZ watches `Value` this way).
  public var emitsChangedSignal: Bool
  public var onSet: SetHandler?

  public init(
    _ name: String, value: DBusValue, access: Access = .read, emitsChangedSignal: Bool = true,
    onSet: SetHandler? = nil
  ) {
    self.name = name
    self.value = value
    self.access = access
    self.emitsChangedSignal = emitsChangedSignal
    self.onSet = onSet
  }

  /// The property's D-Bus type.
  public var signature: DBusSignature { value.signature }
}

/// A signal an interface may emit, declared for introspection (emit it with `DBusConnection.emit`).
public struct DBusSignalDeclaration: Sendable, Equatable {
  public var name: String
  public var arguments: [DBusArgument]

  public init(_ name: String, arguments: [DBusArgument] = []) {
    self.name = name
    self.arguments = arguments
  }
}

/// One interface of an exported object.
public struct DBusInterface {
  public var name: String
  public var methods: [DBusMethod]
  public var properties: [DBusProperty]
  public var signals: [DBusSignalDeclaration]

  public init(
    _ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
    signals: [DBusSignalDeclaration] = []
  ) {
    self.name = name
    self.methods = methods
    self.properties = properties
    self.signals = signals
  }

  /// The readable properties and their values, as `GetAll` and `GetManagedObjects` report them
  /// (write-only ones are left out, as `Get` refuses them).
  var readablePropertyValues: [String: DBusValue] {
    let readable = properties.filter { $0.access != .write }
    return Dictionary(readable.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
  }
}

/// An object to export: a path and its interfaces.
public struct DBusObject {
  public var path: DBusObjectPath
  public var interfaces: [DBusInterface]

  public init(path: DBusObjectPath, interfaces: [DBusInterface]) {
    self.path = path
    self.interfaces = interfaces
  }

  /// Each interface with its properties, as `InterfacesAdded` and `GetManagedObjects` carry them:
  /// `a{sa{sv}}`.
  var interfacesAndProperties: DBusValue {
    .dictionary(
      key: "s", value: "a{sv}",
      interfaces.map { DBusDictionaryEntry(.string($0.name), .vardict($0.readablePropertyValues)) })
  }

  /// Checks names and signatures before anything is registered.
  func validate() throws(DBusError) {
    try DBusSyntax.path(path)
    var seen: Set<String> = []
    for interface in interfaces {
      try DBusSyntax.interface(interface.name)
      guard seen.insert(interface.name).inserted else {
        throw .invalidValue("interface \(interface.name) appears twice on \(path)")
      }
      for method in interface.methods {
        try DBusSyntax.member(method.name)
        for argument in method.inputs + method.outputs {
          guard argument.signature.isSingleCompleteType else {
            throw .invalidValue(
              "argument \(argument.name) of \(method.name): bad type \"\(argument.signature)\"")
          }
        }
      }
      for property in interface.properties {
        try DBusSyntax.member(property.name)
        try property.value.validate()
      }
      for signal in interface.signals { try DBusSyntax.member(signal.name) }
    }
  }
}
