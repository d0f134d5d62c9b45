/// One CBOR data item (RFC 8949) of the kinds SMP bodies use: integers, byte and text strings,
/// arrays, maps, booleans and null. Tags, floats and other simple values are refused by the decoder.
public indirect enum CBOR: Equatable, Sendable {
  case unsigned(UInt64)
  /// The integer -1 - n (major type 1 as it is on the wire).
  case negative(UInt64)
  case bytes([UInt8])
  case text(String)
  case array([CBOR])
  /// Entries in wire order; the decoder refuses a key that appears twice.
  case map([Entry])
  case bool(Bool)
  case null

  public struct Entry: Equatable, Sendable {
    public var key: CBOR
    public var value: CBOR

    public init(_ key: CBOR, _ value: CBOR) {
      self.key = key
      self.value = value
    }
  }

  /// A signed integer, in the shorter of the two integer forms.
  public static func int(_ value: Int64) -> CBOR {
    value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
  }

  /// A map with text keys, in the order given.
  public static func textMap(_ entries: KeyValuePairs<String, CBOR>) -> CBOR {
    .map(entries.map { Entry(.text($0.key), $0.value) })
  }

  /// The value under the text key `key` of a map; nil for a missing key or a value that is no map.
  public subscript(key: String) -> CBOR? {
    guard case .map(let entries) = self else { return nil }
    return entries.first { $0.key == .text(key) }?.value
  }

  /// The integer value when it fits an `Int64`.
  public var int64: Int64? {
    switch self {
    case .unsigned(let value): value <= UInt64(Int64.max) ? Int64(value) : nil
    case .negative(let value): value <= UInt64(Int64.max) ? -Int64(value) - 1 : nil
    default: nil
    }
  }

  public var unsignedValue: UInt64? {
    if case .unsigned(let value) = self { return value }
    return nil
  }

  public var textValue: String? {
    if case .text(let value) = self { return value }
    return nil
  }

  public var bytesValue: [UInt8]? {
    if case .bytes(let value) = self { return value }
    return nil
  }

  public var boolValue: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }
}
