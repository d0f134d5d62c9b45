/// Answering method calls to exported objects: the object's own methods through their handlers, and
/// the standard interfaces (Introspectable, Properties, ObjectManager) from the descriptions. Every
/// call gets a reply: values, the handler's error, or the standard error for what does not exist.
extension DBusRouter {
  /// Answers a method call addressed to this connection. Returns false for other messages, which
  /// libdbus then handles itself.
  func handleMethodCall(_ message: DBusMessage) -> Bool {
    guard message.kind == .methodCall, let path = message.path, let member = message.member else {
      return false
    }
    let result: Result<[DBusValue], DBusError>
    do throws(DBusError) {
      let call = DBusMethodCall(
        sender: message.sender, path: path, interface: message.interface, member: member,
        arguments: try message.arguments(), serial: message.serial)
      result = .success(try answer(call, signature: message.signature))
    } catch {
      result = .failure(error)
    }
    if message.expectsReply { reply(to: message, with: result) }
    return true
  }

  /// Sends the reply; if the values cannot be sent (a bad value from a handler, descriptors on a
  /// transport without them), sends that failure as an error reply instead, so the caller is never
  /// left waiting.
  private func reply(to call: DBusMessage, with result: Result<[DBusValue], DBusError>) {
    do throws(DBusError) {
      switch result {
      case .success(let values):
        let reply = try call.methodReturn()
        try reply.append(values)
        try send(reply)
      case .failure(let error):
        try send(try call.errorReply(error))
      }
    } catch {
      _ = try? send(try call.errorReply(error))
    }
  }

  /// The reply values for `call`, or the error to answer with.
  private func answer(_ call: DBusMethodCall, signature: DBusSignature) throws(DBusError) -> [DBusValue] {
    guard tree.isNode(call.path) else {
      throw .named(DBusError.Name.unknownObject, message: "no object at \(call.path)")
    }
    let interface = call.interface ?? resolveInterface(of: call.member, at: call.path)
    switch interface {
    case DBusStandardInterface.introspectable where call.member == "Introspect":
      try expect(signature, "", for: call)
      return [.string(tree.introspection(of: call.path).xml)]
    case DBusStandardInterface.properties where tree.objects[call.path] != nil:
      return try answerProperties(call, signature: signature)
    case DBusStandardInterface.objectManager where call.member == "GetManagedObjects":
      guard tree.managers.contains(call.path) else { break }
      try expect(signature, "", for: call)
      return [tree.managedObjects(below: call.path)]
    default:
      guard
        let method = tree.objects[call.path]?.interfaces.first(where: { $0.name == interface })?
          .methods.first(where: { $0.name == call.member })
      else { break }
      try expect(signature, DBusSignature(joining: method.inputs.map(\.signature)), for: call)
      let handler = method.handler
      let values = try handler(call)
      let declared = DBusSignature(joining: method.outputs.map(\.signature))
      guard values.signature == declared else {
        throw .failed("\(call.member) answered \"\(values.signature)\" where \"\(declared)\" is declared")
      }
      return values
    }
    throw .named(
      DBusError.Name.unknownMethod,
      message:
        "no method \(call.member) in interface \(interface.isEmpty ? "(none)" : interface) at \(call.path)")
  }

  /// For a call without an interface, the interface that has `member` on this node: the object's own
  /// first, then the standard ones.
  private func resolveInterface(of member: String, at path: DBusObjectPath) -> String {
    if let own = tree.objects[path]?.interfaces.first(where: { $0.methods.contains { $0.name == member } }) {
      return own.name
    }
    switch member {
    case "Introspect": return DBusStandardInterface.introspectable
    case "Get", "GetAll", "Set": return DBusStandardInterface.properties
    case "GetManagedObjects": return DBusStandardInterface.objectManager
    default: return ""
    }
  }

  private func answerProperties(_ call: DBusMethodCall, signature: DBusSignature) throws(DBusError)
    -> [DBusValue]
  {
    let arguments = call.arguments
    switch call.member {
    case "Get":
      try expect(signature, "ss", for: call)
      guard case .string(let interface) = arguments[0], case .string(let name) = arguments[1] else { break }
      let property = try tree.property(name, interface: interface, path: call.path)
      guard property.access != .write else {
        throw .named(DBusError.Name.accessDenied, message: "property \(name) is write-only")
      }
      return [.variant(property.value)]
    case "GetAll":
      try expect(signature, "s", for: call)
      guard case .string(let interface) = arguments[0] else { break }
      return [.vardict(try tree.interface(interface, path: call.path).readablePropertyValues)]
    case "Set":
      try expect(signature, "ssv", for: call)
      guard case .string(let interface) = arguments[0], case .string(let name) = arguments[1],
        case .variant(let value) = arguments[2]
      else { break }
      let property = try tree.property(name, interface: interface, path: call.path)
      guard property.access != .read else {
        throw .named(DBusError.Name.propertyReadOnly, message: "property \(name) is read-only")
      }
      guard value.signature == property.signature else {
        throw .invalidArgs("property \(name) has type \"\(property.signature)\", not \"\(value.signature)\"")
      }
      try property.onSet?(value)
      if tree.store(value, property: name, interface: interface, path: call.path) == true {
        try emitPropertiesChanged(
          path: call.path, interface: interface, changed: [name: value], invalidated: [])
      }
      return []
    default:
      break
    }
    throw .named(
      DBusError.Name.unknownMethod, message: "no method \(call.member) in \(DBusStandardInterface.properties)"
    )
  }

  private func expect(_ signature: DBusSignature, _ declared: DBusSignature, for call: DBusMethodCall)
    throws(DBusError)
  {
    guard signature == declared else {
      throw .invalidArgs("\(call.member) takes \"\(declared)\", not \"\(signature)\"")
    }
  }
}
