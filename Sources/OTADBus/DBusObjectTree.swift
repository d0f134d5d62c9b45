/// The exported objects and object managers of one connection, and the questions the standard
/// interfaces ask of them. Plain data: the router keeps one and the export calls change it.
struct DBusObjectTree {
  var objects: [DBusObjectPath: DBusObject] = [:]
  /// Paths that answer `org.freedesktop.DBus.ObjectManager` for everything below them.
  var managers: Set<DBusObjectPath> = []

  /// Whether `path` is a node: an exported object, an object manager, or an ancestor of one, so that
  /// introspection can walk down from "/" to every object.
  func isNode(_ path: DBusObjectPath) -> Bool {
    if objects[path] != nil || managers.contains(path) { return true }
    return objects.keys.contains { $0.isDescendant(of: path) }
      || managers.contains { $0.isDescendant(of: path) }
  }

  /// The names of the nodes directly below `path`, sorted.
  func children(of path: DBusObjectPath) -> [String] {
    let below =
      objects.keys.compactMap { $0.childElement(below: path) }
      + managers.compactMap { $0.childElement(below: path) }
    return Set(below).sorted()
  }

  /// The object managers `path` is reported by: those strictly above it.
  func managers(above path: DBusObjectPath) -> [DBusObjectPath] {
    managers.filter { path.isDescendant(of: $0) }.sorted()
  }

  /// `GetManagedObjects` of the manager at `root`: every object strictly below it with its interfaces
  /// and their properties, `a{oa{sa{sv}}}`, sorted by path.
  func managedObjects(below root: DBusObjectPath) -> DBusValue {
    let entries = objects.values.filter { $0.path.isDescendant(of: root) }.sorted { $0.path < $1.path }.map {
      DBusDictionaryEntry(.objectPath($0.path), $0.interfacesAndProperties)
    }
    return .dictionary(key: "o", value: "a{sa{sv}}", entries)
  }

  /// The introspection data of the node at `path`.
  func introspection(of path: DBusObjectPath) -> DBusIntrospection {
    var interfaces = [DBusIntrospection.introspectable, DBusIntrospection.peer]
    let object = objects[path]
    if object != nil { interfaces.append(DBusIntrospection.properties) }
    if managers.contains(path) { interfaces.append(DBusIntrospection.objectManager) }
    interfaces += (object?.interfaces ?? []).map(DBusIntrospection.Interface.init)
    return DBusIntrospection(interfaces: interfaces, children: children(of: path))
  }

  /// The property `name` of `interface` on the object at `path`, or the error a peer should get.
  func property(_ name: String, interface: String, path: DBusObjectPath) throws(DBusError) -> DBusProperty {
    let interface = try self.interface(interface, path: path)
    guard let property = interface.properties.first(where: { $0.name == name }) else {
      throw .named(
        DBusError.Name.unknownProperty, message: "no property \(name) in \(interface.name) at \(path)")
    }
    return property
  }

  /// The interface `name` of the object at `path`, or the error a peer should get.
  func interface(_ name: String, path: DBusObjectPath) throws(DBusError) -> DBusInterface {
    guard let object = objects[path] else {
      throw .named(DBusError.Name.unknownObject, message: "no object at \(path)")
    }
    guard let interface = object.interfaces.first(where: { $0.name == name }) else {
      throw .named(DBusError.Name.unknownInterface, message: "no interface \(name) at \(path)")
    }
    return interface
  }

  /// Stores a new value for a property (whose type has been checked); returns whether to announce
  /// the change (never for a write-only property, whose value is nobody's to read), or nil when the
  /// property no longer exists (a handler unexported it meanwhile).
  mutating func store(
    _ value: DBusValue, property name: String, interface: String, path: DBusObjectPath
  ) -> Bool? {
    guard let interfaceIndex = objects[path]?.interfaces.firstIndex(where: { $0.name == interface }),
      let propertyIndex = objects[path]?.interfaces[interfaceIndex].properties.firstIndex(where: {
        $0.name == name
      })
    else { return nil }
    objects[path]?.interfaces[interfaceIndex].properties[propertyIndex].value = value
    return objects[path].map {
      let property = $0.interfaces[interfaceIndex].properties[propertyIndex]
      return property.emitsChangedSignal && property.access != .write
    }
  }
}
