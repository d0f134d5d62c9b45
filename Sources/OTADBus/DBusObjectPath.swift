import CDBus

/// A D-Bus object path ("/org/bluez/hci0"). A distinct type so a path is never marshalled as a plain
/// string (BlueZ rejects that) and so path arithmetic has one home. Validated where it is used
/// (libdbus's own check), not on construction, so literals stay literals.
public struct DBusObjectPath: RawRepresentable, Hashable, Comparable, Sendable, ExpressibleByStringLiteral,
  CustomStringConvertible
{
  public let rawValue: String

  public init(rawValue: String) { self.rawValue = rawValue }
  public init(_ rawValue: String) { self.rawValue = rawValue }
  public init(stringLiteral value: String) { rawValue = value }

  /// The root object, "/".
  public static let root: DBusObjectPath = "/"

  public var description: String { rawValue }

  /// Whether libdbus accepts this as an object path.
  public var isValid: Bool { DBusSyntax.check(rawValue, with: dbus_validate_path) }

  /// This path with one more element: "/a" + "b" is "/a/b"; "/" + "b" is "/b".
  public func appending(_ element: String) -> DBusObjectPath {
    DBusObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
  }

  /// Whether this path lies strictly below `ancestor` ("/a/b" is below "/a" and "/", not below "/a/b").
  public func isDescendant(of ancestor: DBusObjectPath) -> Bool {
    guard self != ancestor else { return false }
    if ancestor.rawValue == "/" { return true }
    return rawValue.hasPrefix(ancestor.rawValue + "/")
  }

  /// The first element below `ancestor` on the way to this path: "/a/b/c" below "/a" is "b". Nil when
  /// this path is not below `ancestor`.
  func childElement(below ancestor: DBusObjectPath) -> String? {
    guard isDescendant(of: ancestor) else { return nil }
    let rest = rawValue.dropFirst(ancestor.rawValue == "/" ? 1 : ancestor.rawValue.count + 1)
    return rest.split(separator: "/", maxSplits: 1).first.map(String.init)
  }

  public static func < (lhs: DBusObjectPath, rhs: DBusObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// libdbus's name checks, run before a name reaches a libdbus call that would otherwise print a
/// warning and fail (or, with fatal warnings on, abort).
enum DBusSyntax {
  /// Runs a `dbus_validate_*` function on `string`; strings with a NUL are never valid.
  static func check(
    _ string: String,
    with validate: (UnsafePointer<CChar>?, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t
  ) -> Bool {
    guard !string.utf8.contains(0) else { return false }
    return string.withCString { validate($0, nil) != 0 }
  }

  static func path(_ path: DBusObjectPath) throws(DBusError) {
    guard path.isValid else { throw .invalidValue("not a valid object path: \"\(path)\"") }
  }

  static func interface(_ name: String) throws(DBusError) {
    guard check(name, with: dbus_validate_interface) else {
      throw .invalidValue("not a valid interface name: \"\(name)\"")
    }
  }

  static func member(_ name: String) throws(DBusError) {
    guard check(name, with: dbus_validate_member) else {
      throw .invalidValue("not a valid member name: \"\(name)\"")
    }
  }

  static func busName(_ name: String) throws(DBusError) {
    guard check(name, with: dbus_validate_bus_name) else {
      throw .invalidValue("not a valid bus name: \"\(name)\"")
    }
  }

  static func isErrorName(_ name: String) -> Bool { check(name, with: dbus_validate_error_name) }
}
