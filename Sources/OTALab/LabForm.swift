/// The `name=value` pairs of a form's urlencoded body or a Cookie header, decoded.
public enum LabForm {
  /// `a=1&b=x+y%21` → ["a": "1", "b": "x y!"]; a repeated key keeps its first value.
  public static func fields(_ body: String) -> [String: String] {
    var fields: [String: String] = [:]
    for pair in body.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let key = decode(String(parts[0])) else { continue }
      let value = parts.count > 1 ? decode(String(parts[1])) : ""
      if fields[key] == nil, let value { fields[key] = value }
    }
    return fields
  }

  /// The value of cookie `name` in a Cookie header (`a=1; b=2`).
  public static func cookie(_ name: String, in header: String?) -> String? {
    guard let header else { return nil }
    for part in header.split(separator: ";") {
      let pair = part.split(separator: "=", maxSplits: 1)
      if pair.count == 2, pair[0].trimmingCharacters(inSet: " ") == name {
        return String(pair[1]).trimmingCharacters(inSet: " ")
      }
    }
    return nil
  }

  /// Percent-decoding with `+` as a space; nil for a broken escape or bytes that are not UTF-8.
  static func decode(_ text: String) -> String? {
    var bytes: [UInt8] = []
    var iterator = Array(text.utf8).makeIterator()
    while let byte = iterator.next() {
      switch byte {
      case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
      case UInt8(ascii: "%"):
        guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
          return nil
        }
        bytes.append(high << 4 | low)
      default: bytes.append(byte)
      }
    }
    return String(validating: bytes, as: UTF8.self)
  }

  static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
