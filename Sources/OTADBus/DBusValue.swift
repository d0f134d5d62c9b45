/// One D-Bus value of any type, as it goes into and comes out of a message.
///
/// Containers carry their element types, so an empty array or dictionary still marshals with the
/// right signature, and a value always knows its own `signature`. Dictionaries keep their entries in
/// wire order (equality is order-sensitive); `vardict` and `vardict()` convert the ubiquitous `a{sv}`
/// to and from a Swift dictionary.
public enum DBusValue: Sendable, Equatable {
  case byte(UInt8)
  case boolean(Bool)
  case int16(Int16)
  case uint16(UInt16)
  case int32(Int32)
  case uint32(UInt32)
  case int64(Int64)
  case uint64(UInt64)
  case double(Double)
  case string(String)
  case objectPath(DBusObjectPath)
  case signature(DBusSignature)
  /// A Unix file descriptor ('h'); see `DBusFileDescriptor` for who owns it.
  case unixFD(DBusFileDescriptor)
  /// An array of values that all have the element signature (e.g. "s" for `as`).
  case array(DBusSignature, [DBusValue])
  /// A dictionary, `a{kv}`: the key signature (a basic type), the value signature, the entries.
  case dictionary(key: DBusSignature, value: DBusSignature, [DBusDictionaryEntry])
  /// A struct, `(...)`: one or more fields.
  case structure([DBusValue])
  /// A variant, `v`: a value that carries its own signature.
  indirect case variant(DBusValue)

  /// The D-Bus signature of this value, one complete type.
  public var signature: DBusSignature {
    switch self {
    case .byte: "y"
    case .boolean: "b"
    case .int16: "n"
    case .uint16: "q"
    case .int32: "i"
    case .uint32: "u"
    case .int64: "x"
    case .uint64: "t"
    case .double: "d"
    case .string: "s"
    case .objectPath: "o"
    case .signature: "g"
    case .unixFD: "h"
    case .array(let element, _): DBusSignature("a" + element.rawValue)
    case .dictionary(let key, let value, _): DBusSignature("a{" + key.rawValue + value.rawValue + "}")
    case .structure(let fields): DBusSignature("(" + fields.map(\.signature.rawValue).joined() + ")")
    case .variant: "v"
    }
  }
}

/// One entry of a `DBusValue.dictionary`.
public struct DBusDictionaryEntry: Sendable, Equatable {
  public var key: DBusValue
  public var value: DBusValue

  public init(_ key: DBusValue, _ value: DBusValue) {
    self.key = key
    self.value = value
  }
}

extension [DBusValue] {
  /// The signature of these values as a message body: their signatures in a row.
  public var signature: DBusSignature { DBusSignature(joining: map(\.signature)) }
}
