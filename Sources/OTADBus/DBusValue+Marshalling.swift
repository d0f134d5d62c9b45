import CDBus

/// Marshalling with libdbus's iterator API (`dbus_message_iter_*`): the variadic append_args does not
/// import into Swift, and iterators are the only way to write containers anyway.
///
/// Writing checks the whole value first (`validate()`), so a bad value throws before the message is
/// touched and the append itself can only fail for lack of memory. Reading recurses into containers
/// and keeps their element signatures, so what comes out marshals back to the same bytes.
extension DBusValue {
  /// Throws if this value cannot go on the wire: an invalid path or signature, a NUL in a string, a
  /// container element whose type differs from the container's declared element type.
  func validate() throws(DBusError) {
    switch self {
    case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .unixFD:
      return
    case .string(let string):
      guard !string.utf8.contains(0) else { throw .invalidValue("string contains a NUL byte") }
    case .objectPath(let path):
      try DBusSyntax.path(path)
    case .signature(let signature):
      guard signature.isValid else { throw .invalidValue("not a valid signature: \"\(signature)\"") }
    case .array(let element, let elements):
      guard element.isSingleCompleteType else {
        throw .invalidValue("array element type is not one complete type: \"\(element)\"")
      }
      for value in elements {
        guard value.signature == element else {
          throw .typeMismatch(expected: element.rawValue, found: value.signature.rawValue)
        }
        try value.validate()
      }
    case .dictionary(let key, let value, let entries):
      guard key.isBasicType else { throw .invalidValue("dictionary key type is not basic: \"\(key)\"") }
      guard value.isSingleCompleteType else {
        throw .invalidValue("dictionary value type is not one complete type: \"\(value)\"")
      }
      for entry in entries {
        guard entry.key.signature == key else {
          throw .typeMismatch(expected: key.rawValue, found: entry.key.signature.rawValue)
        }
        guard entry.value.signature == value else {
          throw .typeMismatch(expected: value.rawValue, found: entry.value.signature.rawValue)
        }
        try entry.key.validate()
        try entry.value.validate()
      }
    case .structure(let fields):
      guard !fields.isEmpty else { throw .invalidValue("a struct needs at least one field") }
      for field in fields { try field.validate() }
    case .variant(let inner):
      try inner.validate()
    }
  }

  /// Appends this (validated) value at `iterator`.
  func append(to iterator: UnsafeMutablePointer<DBusMessageIter>) throws(DBusError) {
    switch self {
    case .byte(let value): try Self.appendBasic(value, type: cdbus_type_byte, to: iterator)
    case .boolean(let value):
      try Self.appendBasic(dbus_bool_t(value ? 1 : 0), type: cdbus_type_boolean, to: iterator)
    case .int16(let value): try Self.appendBasic(value, type: cdbus_type_int16, to: iterator)
    case .uint16(let value): try Self.appendBasic(value, type: cdbus_type_uint16, to: iterator)
    case .int32(let value): try Self.appendBasic(value, type: cdbus_type_int32, to: iterator)
    case .uint32(let value): try Self.appendBasic(value, type: cdbus_type_uint32, to: iterator)
    case .int64(let value): try Self.appendBasic(value, type: cdbus_type_int64, to: iterator)
    case .uint64(let value): try Self.appendBasic(value, type: cdbus_type_uint64, to: iterator)
    case .double(let value): try Self.appendBasic(value, type: cdbus_type_double, to: iterator)
    case .string(let value): try Self.appendString(value, type: cdbus_type_string, to: iterator)
    case .objectPath(let path):
      try Self.appendString(path.rawValue, type: cdbus_type_object_path, to: iterator)
    case .signature(let signature):
      try Self.appendString(signature.rawValue, type: cdbus_type_signature, to: iterator)
    case .unixFD(let descriptor):
      // libdbus duplicates the descriptor into the message; ours stays open and owned by `descriptor`.
      var raw = descriptor.rawValue
      guard dbus_message_iter_append_basic(iterator, cdbus_type_unix_fd, &raw) != 0 else {
        throw .invalidValue("descriptor \(raw) could not be duplicated into the message")
      }
    case .array("y", let elements):
      try Self.withContainer(cdbus_type_array, contents: "y", in: iterator) { (array) throws(DBusError) in
        let bytes = elements.compactMap(\.byteValue)
        guard !bytes.isEmpty else { return }
        try bytes.withUnsafeBufferPointer { (buffer) throws(DBusError) in
          var base = buffer.baseAddress
          guard dbus_message_iter_append_fixed_array(array, cdbus_type_byte, &base, Int32(buffer.count)) != 0
          else { throw .outOfMemory }
        }
      }
    case .array(let element, let elements):
      try Self.withContainer(cdbus_type_array, contents: element.rawValue, in: iterator) {
        (array) throws(DBusError) in
        for value in elements { try value.append(to: array) }
      }
    case .dictionary(let key, let value, let entries):
      let contents = "{" + key.rawValue + value.rawValue + "}"
      try Self.withContainer(cdbus_type_array, contents: contents, in: iterator) {
        (array) throws(DBusError) in
        for entry in entries {
          try Self.withContainer(cdbus_type_dict_entry, contents: nil, in: array) {
            (pair) throws(DBusError) in
            try entry.key.append(to: pair)
            try entry.value.append(to: pair)
          }
        }
      }
    case .structure(let fields):
      try Self.withContainer(cdbus_type_struct, contents: nil, in: iterator) {
        (structure) throws(DBusError) in
        for field in fields { try field.append(to: structure) }
      }
    case .variant(let inner):
      try Self.withContainer(cdbus_type_variant, contents: inner.signature.rawValue, in: iterator) {
        (variant) throws(DBusError) in
        try inner.append(to: variant)
      }
    }
  }

  /// Reads the value at `iterator` (which must point at one) without advancing it.
  static func read(from iterator: UnsafeMutablePointer<DBusMessageIter>) throws(DBusError) -> DBusValue {
    let type = dbus_message_iter_get_arg_type(iterator)
    switch type {
    case cdbus_type_byte: return .byte(readBasic(iterator, as: UInt8.self))
    case cdbus_type_boolean: return .boolean(readBasic(iterator, as: dbus_bool_t.self) != 0)
    case cdbus_type_int16: return .int16(readBasic(iterator, as: Int16.self))
    case cdbus_type_uint16: return .uint16(readBasic(iterator, as: UInt16.self))
    case cdbus_type_int32: return .int32(readBasic(iterator, as: Int32.self))
    case cdbus_type_uint32: return .uint32(readBasic(iterator, as: UInt32.self))
    case cdbus_type_int64: return .int64(readBasic(iterator, as: Int64.self))
    case cdbus_type_uint64: return .uint64(readBasic(iterator, as: UInt64.self))
    case cdbus_type_double: return .double(readBasic(iterator, as: Double.self))
    case cdbus_type_string: return .string(try readString(iterator))
    case cdbus_type_object_path: return .objectPath(DBusObjectPath(try readString(iterator)))
    case cdbus_type_signature: return .signature(DBusSignature(try readString(iterator)))
    case cdbus_type_unix_fd:
      // libdbus hands out a fresh duplicate on every read: it is ours to close.
      let descriptor = readBasic(iterator, as: Int32.self)
      guard descriptor >= 0 else { throw .invalidValue("the message's descriptor could not be duplicated") }
      return .unixFD(DBusFileDescriptor(taking: descriptor))
    case cdbus_type_array:
      return try readArray(iterator)
    case cdbus_type_struct:
      return .structure(
        try withRecursion(into: iterator) { (fields) throws(DBusError) in try readAll(fields) })
    case cdbus_type_variant:
      return .variant(
        try withRecursion(into: iterator) { (inner) throws(DBusError) in try read(from: inner) })
    default:
      throw .typeMismatch(expected: "a D-Bus value", found: type == cdbus_type_invalid ? "" : typeName(type))
    }
  }

  /// Reads every value from `iterator` to the end of its container (or message).
  static func readAll(_ iterator: UnsafeMutablePointer<DBusMessageIter>) throws(DBusError) -> [DBusValue] {
    var values: [DBusValue] = []
    while dbus_message_iter_get_arg_type(iterator) != cdbus_type_invalid {
      values.append(try read(from: iterator))
      dbus_message_iter_next(iterator)
    }
    return values
  }

  private static func readArray(_ iterator: UnsafeMutablePointer<DBusMessageIter>) throws(DBusError)
    -> DBusValue
  {
    let signature = currentSignature(iterator)
    let element = DBusSignature(String(signature.rawValue.dropFirst()))
    if let types = signature.dictionaryTypes {
      let entries = try withRecursion(into: iterator) { (array) throws(DBusError) in
        var entries: [DBusDictionaryEntry] = []
        while dbus_message_iter_get_arg_type(array) == cdbus_type_dict_entry {
          entries.append(
            try withRecursion(into: array) { (pair) throws(DBusError) in
              let key = try read(from: pair)
              guard dbus_message_iter_next(pair) != 0 else {
                throw .typeMismatch(expected: types.value.rawValue, found: "")
              }
              return DBusDictionaryEntry(key, try read(from: pair))
            })
          dbus_message_iter_next(array)
        }
        return entries
      }
      return .dictionary(key: types.key, value: types.value, entries)
    }
    if element == "y" {
      let bytes = withRecursion(into: iterator) { array in
        var base: UnsafePointer<UInt8>?
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(array, &base, &count)
        guard let base, count > 0 else { return [UInt8]() }
        return Array(UnsafeBufferPointer(start: base, count: Int(count)))
      }
      return .bytes(bytes)
    }
    return .array(
      element, try withRecursion(into: iterator) { (array) throws(DBusError) in try readAll(array) })
  }

  /// The signature of the value at `iterator`.
  static func currentSignature(_ iterator: UnsafeMutablePointer<DBusMessageIter>) -> DBusSignature {
    guard let raw = dbus_message_iter_get_signature(iterator) else { return "" }
    defer { dbus_free(raw) }
    return DBusSignature(String(cString: raw))
  }

  private static func typeName(_ type: Int32) -> String {
    guard let scalar = Unicode.Scalar(UInt32(bitPattern: type)) else { return "\(type)" }
    return String(Character(scalar))
  }

  private static func readBasic<T: FixedWidthInteger>(
    _ iterator: UnsafeMutablePointer<DBusMessageIter>, as: T.Type
  ) -> T {
    var value: T = 0
    dbus_message_iter_get_basic(iterator, &value)
    return value
  }

  private static func readBasic(_ iterator: UnsafeMutablePointer<DBusMessageIter>, as: Double.Type) -> Double
  {
    var value = 0.0
    dbus_message_iter_get_basic(iterator, &value)
    return value
  }

  private static func readString(_ iterator: UnsafeMutablePointer<DBusMessageIter>) throws(DBusError)
    -> String
  {
    var pointer: UnsafePointer<CChar>?
    dbus_message_iter_get_basic(iterator, &pointer)
    guard let pointer else { throw .invalidValue("libdbus returned no string") }
    return String(cString: pointer)
  }

  private static func appendBasic<T: BitwiseCopyable>(
    _ value: T, type: Int32, to iterator: UnsafeMutablePointer<DBusMessageIter>
  ) throws(DBusError) {
    var value = value
    guard dbus_message_iter_append_basic(iterator, type, &value) != 0 else { throw .outOfMemory }
  }

  /// Strings, paths and signatures are passed as a pointer to a `const char *`.
  private static func appendString(
    _ string: String, type: Int32, to iterator: UnsafeMutablePointer<DBusMessageIter>
  ) throws(DBusError) {
    let appended = string.withCString { characters in
      var pointer: UnsafePointer<CChar>? = characters
      return dbus_message_iter_append_basic(iterator, type, &pointer)
    }
    guard appended != 0 else { throw .outOfMemory }
  }

  /// Opens a container at `parent`, lets `body` fill it, and closes it; abandons it if `body` throws,
  /// as libdbus requires of every opened container. The sub-iterator lives on the heap, so its
  /// address is stable across the open/close pair.
  private static func withContainer(
    _ type: Int32, contents: String?, in parent: UnsafeMutablePointer<DBusMessageIter>,
    _ body: (UnsafeMutablePointer<DBusMessageIter>) throws(DBusError) -> Void
  ) throws(DBusError) {
    let child = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
    defer { child.deallocate() }
    dbus_message_iter_init_closed(child)
    let opened =
      if let contents {
        contents.withCString { dbus_message_iter_open_container(parent, type, $0, child) }
      } else {
        dbus_message_iter_open_container(parent, type, nil, child)
      }
    guard opened != 0 else { throw .outOfMemory }
    do throws(DBusError) {
      try body(child)
    } catch {
      dbus_message_iter_abandon_container(parent, child)
      throw error
    }
    guard dbus_message_iter_close_container(parent, child) != 0 else { throw .outOfMemory }
  }

  /// Runs `body` with a reader for the contents of the container at `iterator`.
  private static func withRecursion<T, Failure: Error>(
    into iterator: UnsafeMutablePointer<DBusMessageIter>,
    _ body: (UnsafeMutablePointer<DBusMessageIter>) throws(Failure) -> T
  ) throws(Failure) -> T {
    let child = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
    defer { child.deallocate() }
    dbus_message_iter_recurse(iterator, child)
    return try body(child)
  }
}
