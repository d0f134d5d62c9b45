import OTAWire
import Testing

/// Bytes written as hex digits in tests ("a1 61 72", spaces ignored) and back. Not `Hex`: that is
/// OTAWire's, which prints hex for the tools and which this one's `string` is.
public enum HexNotation {
  /// The bytes `text` spells; a character that is not a hex digit, or an odd count of digits, is
  /// recorded as the test's failure (a typo in a test's vector) and gives no bytes.
  public static func bytes(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
    let digits = Array(text.filter { $0 != " " && $0 != "\n" })
    guard digits.count.isMultiple(of: 2) else {
      Issue.record("\(digits.count) hex digits, an odd count: \(text)", sourceLocation: sourceLocation)
      return []
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    for index in stride(from: 0, to: digits.count, by: 2) {
      guard let byte = UInt8(String(digits[index...index + 1]), radix: 16) else {
        Issue.record(
          "not hex: \(String(digits[index...index + 1])) in \(text)", sourceLocation: sourceLocation)
        return []
      }
      bytes.append(byte)
    }
    return bytes
  }

  /// Lowercase hex digits, two a byte, no spaces (OTAWire's `Hex`).
  public static func string(_ bytes: some Sequence<UInt8>) -> String { Hex.string(bytes) }
}
