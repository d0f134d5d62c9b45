/// Why bytes are not one acceptable CBOR item. Every malformed input ends in one of these; none traps.
public enum CBORError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The input ends inside an item.
  case truncated
  /// Bytes follow the one item the input should hold.
  case trailingBytes(count: Int)
  /// Additional information 28, 29 or 30: reserved by RFC 8949.
  case reservedAdditionalInfo(UInt8)
  /// A well-formed item of a kind this codec does not take (tags, floats, other simple values).
  case unsupported(String)
  /// An indefinite length where none may be (integers, simple values) or a chunk of the wrong kind.
  case invalidIndefiniteLength
  /// A "break" byte outside an indefinite-length item.
  case unexpectedBreak
  /// A text string that is not UTF-8.
  case invalidUTF8
  /// A map key that appears twice.
  case duplicateKey
  /// Nesting deeper than the limit.
  case tooDeep(limit: Int)
  /// More items in total than the limit.
  case tooManyItems(limit: Int)
  /// The input, or a string in it, is longer than the limit.
  case tooLarge(limit: Int)

  public var description: String {
    switch self {
    case .truncated: "CBOR truncated"
    case .trailingBytes(let count): "\(count) bytes after the CBOR item"
    case .reservedAdditionalInfo(let info): "reserved additional information \(info)"
    case .unsupported(let what): "unsupported CBOR: \(what)"
    case .invalidIndefiniteLength: "invalid indefinite length"
    case .unexpectedBreak: "unexpected break"
    case .invalidUTF8: "text string is not UTF-8"
    case .duplicateKey: "duplicate map key"
    case .tooDeep(let limit): "nested deeper than \(limit)"
    case .tooManyItems(let limit): "more than \(limit) items"
    case .tooLarge(let limit): "longer than \(limit) bytes"
    }
  }
}
