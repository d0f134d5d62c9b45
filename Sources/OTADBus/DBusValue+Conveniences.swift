/// Builders and accessors for the shapes BlueZ uses all the time: `ay`, `as`, `ao`, `a{sv}`.
/// Accessors return nil for another type, so callers can `guard let` without a switch; the throwing
/// ones are for reading arguments, where a wrong type is the caller's error.
extension DBusValue {
  /// `ay` from bytes.
  public static func bytes(_ bytes: [UInt8]) -> DBusValue { .array("y", bytes.map(DBusValue.byte)) }

  /// `as` from strings.
  public static func strings(_ strings: [String]) -> DBusValue { .array("s", strings.map(DBusValue.string)) }

  /// `ao` from object paths.
  public static func objectPaths(_ paths: [DBusObjectPath]) -> DBusValue {
    .array("o", paths.map(DBusValue.objectPath))
  }

  /// `a{sv}` from a dictionary, each value wrapped in a variant; entries sorted by key so the same
  /// dictionary always marshals to the same bytes.
  public static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
    .dictionary(
      key: "s", value: "v",
      entries.sorted { $0.key < $1.key }.map { DBusDictionaryEntry(.string($0.key), .variant($0.value)) })
  }

  /// The dictionary in an `a{sv}`, variants unwrapped.
  public func vardict() throws(DBusError) -> [String: DBusValue] {
    guard case .dictionary("s", "v", let entries) = self else {
      throw .typeMismatch(expected: "a{sv}", found: signature.rawValue)
    }
    var result: [String: DBusValue] = [:]
    for entry in entries {
      guard case .string(let key) = entry.key, case .variant(let value) = entry.value else {
        throw .typeMismatch(expected: "a{sv}", found: signature.rawValue)
      }
      result[key] = value
    }
    return result
  }

  /// The entries of any dictionary, in wire order.
  public var dictionaryEntries: [DBusDictionaryEntry]? {
    if case .dictionary(_, _, let entries) = self { entries } else { nil }
  }

  /// The elements of an array.
  public var arrayElements: [DBusValue]? {
    if case .array(_, let elements) = self { elements } else { nil }
  }

  /// The fields of a struct.
  public var structureFields: [DBusValue]? {
    if case .structure(let fields) = self { fields } else { nil }
  }

  /// The value inside a variant.
  public var variantValue: DBusValue? {
    if case .variant(let value) = self { value } else { nil }
  }

  /// The bytes of an `ay`.
  public var byteArray: [UInt8]? {
    guard case .array("y", let elements) = self else { return nil }
    return elements.compactMap { if case .byte(let byte) = $0 { byte } else { nil } }
  }

  /// The strings of an `as`.
  public var stringArray: [String]? {
    guard case .array("s", let elements) = self else { return nil }
    return elements.compactMap(\.stringValue)
  }

  public var stringValue: String? {
    if case .string(let value) = self { value } else { nil }
  }

  public var objectPathValue: DBusObjectPath? {
    if case .objectPath(let value) = self { value } else { nil }
  }

  public var boolValue: Bool? {
    if case .boolean(let value) = self { value } else { nil }
  }

  public var byteValue: UInt8? {
    if case .byte(let value) = self { value } else { nil }
  }

  public var uint16Value: UInt16? {
    if case .uint16(let value) = self { value } else { nil }
  }

  public var int16Value: Int16? {
    if case .int16(let value) = self { value } else { nil }
  }

  public var uint32Value: UInt32? {
    if case .uint32(let value) = self { value } else { nil }
  }

  public var int32Value: Int32? {
    if case .int32(let value) = self { value } else { nil }
  }

  public var uint64Value: UInt64? {
    if case .uint64(let value) = self { value } else { nil }
  }

  public var int64Value: Int64? {
    if case .int64(let value) = self { value } else { nil }
  }

  public var doubleValue: Double? {
    if case .double(let value) = self { value } else { nil }
  }

  public var fileDescriptor: DBusFileDescriptor? {
    if case .unixFD(let value) = self { value } else { nil }
  }
}
