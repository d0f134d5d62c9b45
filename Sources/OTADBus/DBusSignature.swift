import CDBus

/// A D-Bus type signature ("a{sv}", "sa{sv}as"). Like `DBusObjectPath`, a distinct type so that the
/// 'g' type has its own case and so that signature arithmetic lives in one place; checked with
/// libdbus where it matters.
public struct DBusSignature: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral,
  CustomStringConvertible
{
  public let rawValue: String

  public init(rawValue: String) { self.rawValue = rawValue }
  public init(_ rawValue: String) { self.rawValue = rawValue }
  public init(stringLiteral value: String) { rawValue = value }

  /// The signature of several complete types in a row, as a message body has.
  public init(joining parts: [DBusSignature]) { rawValue = parts.map(\.rawValue).joined() }

  public var description: String { rawValue }

  /// Whether libdbus accepts this as a sequence of complete types (the empty signature is valid).
  public var isValid: Bool { DBusSyntax.check(rawValue, with: dbus_signature_validate) }

  /// Whether this is exactly one complete type: "a{sv}" is, "sv" and "" are not.
  public var isSingleCompleteType: Bool { DBusSyntax.check(rawValue, with: dbus_signature_validate_single) }

  /// Whether this is one basic type, the only kind a dictionary key may have.
  public var isBasicType: Bool {
    rawValue.utf8.count == 1 && "ybnqiuxtdsogh".utf8.contains(rawValue.utf8.first ?? 0)
  }

  /// The complete types this signature is made of: "sa{sv}as" is ["s", "a{sv}", "as"]. Nil when the
  /// signature is not valid.
  public var completeTypes: [DBusSignature]? {
    guard isValid else { return nil }
    let bytes = Array(rawValue.utf8)
    var types: [DBusSignature] = []
    var start = 0
    while start < bytes.count {
      let end = Self.endOfCompleteType(bytes, from: start)
      types.append(DBusSignature(String(decoding: bytes[start..<end], as: UTF8.self)))
      start = end
    }
    return types
  }

  /// For a dictionary signature "a{kv}", its key and value types.
  var dictionaryTypes: (key: DBusSignature, value: DBusSignature)? {
    guard rawValue.hasPrefix("a{"), rawValue.hasSuffix("}"), isSingleCompleteType else { return nil }
    let inner = DBusSignature(String(rawValue.dropFirst(2).dropLast()))
    guard let parts = inner.completeTypes, parts.count == 2 else { return nil }
    return (parts[0], parts[1])
  }

  /// The index after the complete type starting at `start`, in a signature libdbus has validated.
  private static func endOfCompleteType(_ bytes: [UInt8], from start: Int) -> Int {
    switch bytes[start] {
    case UInt8(ascii: "a"):
      return endOfCompleteType(bytes, from: start + 1)
    case UInt8(ascii: "("), UInt8(ascii: "{"):
      var depth = 0
      var index = start
      repeat {
        switch bytes[index] {
        case UInt8(ascii: "("), UInt8(ascii: "{"): depth += 1
        case UInt8(ascii: ")"), UInt8(ascii: "}"): depth -= 1
        default: break
        }
        index += 1
      } while depth > 0
      return index
    default:
      return start + 1
    }
  }
}
