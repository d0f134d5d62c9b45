/// Exporting objects. The connection answers every call to an exported path itself: the object's
/// methods through their handlers, and `Introspectable`, `Properties` and (below a root added with
/// `addObjectManager`) `ObjectManager` from the descriptions. Calls to paths that are not exported
/// get `UnknownObject`; unknown methods get `UnknownMethod`.
extension DBusConnection {
  /// Exports `object` at its path. Below an object manager, announces it with `InterfacesAdded`.
  /// Throws `ObjectPathInUse` if something is exported there already (unexport it first). All or
  /// nothing: if the announcement cannot be sent, the object is not exported either, so no manager's
  /// watchers are left unaware of it.
  public func export(_ object: DBusObject) throws(DBusError) {
    try object.validate()
    guard router.tree.objects[object.path] == nil else {
      throw .named(DBusError.Name.objectPathInUse, message: "an object is exported at \(object.path) already")
    }
    try registerObjects()
    router.tree.objects[object.path] = object
    do throws(DBusError) {
      for manager in router.tree.managers(above: object.path) {
        try emit(
          signal: "InterfacesAdded", interface: DBusStandardInterface.objectManager, path: manager,
          arguments: [.objectPath(object.path), object.interfacesAndProperties])
      }
    } catch {
      router.tree.objects[object.path] = nil
      throw error
    }
  }

  /// Stops exporting the object at `path`. Below an object manager, announces it with
  /// `InterfacesRemoved` (a failure to send that is ignored: the object is gone either way).
  public func unexport(_ path: DBusObjectPath) {
    guard let object = router.tree.objects.removeValue(forKey: path) else { return }
    for manager in router.tree.managers(above: path) {
      try? emit(
        signal: "InterfacesRemoved", interface: DBusStandardInterface.objectManager, path: manager,
        arguments: [.objectPath(path), .strings(object.interfaces.map(\.name))])
    }
  }

  /// Makes `root` an object manager: it answers `GetManagedObjects` with every exported object below
  /// it, and exports and unexports below it emit `InterfacesAdded` and `InterfacesRemoved`. BlueZ's
  /// `RegisterApplication` and `RegisterAdvertisement` read the tree this way.
  public func addObjectManager(at root: DBusObjectPath) throws(DBusError) {
    try DBusSyntax.path(root)
    try registerObjects()
    router.tree.managers.insert(root)
  }

  /// Stops answering `ObjectManager` at `root`.
  public func removeObjectManager(at root: DBusObjectPath) {
    router.tree.managers.remove(root)
  }

  /// The stored value of an exported property.
  public func property(_ name: String, interface: String, path: DBusObjectPath) -> DBusValue? {
    try? router.tree.property(name, interface: interface, path: path).value
  }

  /// Changes the stored value of an exported property, of the same type as before, and emits
  /// `PropertiesChanged` if the property announces changes (a BlueZ characteristic's `Value`
  /// notification is exactly this). If only the announcement fails, the value is stored and the
  /// error says why nobody heard of it.
  public func setProperty(
    _ name: String, interface: String, path: DBusObjectPath, to value: DBusValue
  ) throws(DBusError) {
    let property = try router.tree.property(name, interface: interface, path: path)
    guard value.signature == property.signature else {
      throw .typeMismatch(expected: property.signature.rawValue, found: value.signature.rawValue)
    }
    try value.validate()
    guard router.tree.store(value, property: name, interface: interface, path: path) == true else { return }
    try emitPropertiesChanged(path: path, interface: interface, changed: [name: value])
  }

  /// The paths exported on this connection, sorted.
  public var exportedPaths: [DBusObjectPath] { router.tree.objects.keys.sorted() }
}
