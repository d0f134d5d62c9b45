/// Hexadecimal digits as the formats the gateway reads write them: ASCII `0-9`, `a-f`, `A-F` and
/// nothing else. Swift's own readers take more: `Int(_:radix:)` a sign, `Character.isHexDigit`
/// the fullwidth forms (`ａ`, `１`).
enum ASCIIHex {
  /// The digit's value, or nil for any other byte.
  static func digit(_ byte: UInt8) -> Int? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
    default: nil
    }
  }

  /// The value of a run of digits (at most 15, so it fits), or nil when any byte is no digit or there is none.
  static func value<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Int? {
    guard !bytes.isEmpty, bytes.count <= 15 else { return nil }
    var value = 0
    for byte in bytes {
      guard let digit = digit(byte) else { return nil }
      value = value << 4 | digit
    }
    return value
  }
}
