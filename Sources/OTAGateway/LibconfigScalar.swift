/// libconfig's scalars other than strings, as its grammar writes them: `true` and `false` in any
/// case; integers `[-+]?[0-9]+` and `0x[0-9A-Fa-f]+` (64-bit, an `L` suffix taken); floats in
/// decimal notation (`1.5`, `-2e3`, `.5`). The characters are checked before Swift's number
/// parsers see them: those take more (a sign after `0x`, `nan`, `inf`, hexadecimal floats).
enum LibconfigScalar {
  static func value(_ word: String) -> LibconfigValue? {
    switch word.lowercased() {
    case "true": return .boolean(true)
    case "false": return .boolean(false)
    default: break
    }
    var digits = Substring(word)
    while let last = digits.last, last == "L" || last == "l" { digits.removeLast() }
    let bytes = Array(digits.utf8)
    if bytes.count > 2, bytes[0] == UInt8(ascii: "0"), bytes[1] | 0x20 == UInt8(ascii: "x") {
      guard bytes.dropFirst(2).allSatisfy({ ASCIIHex.digit($0) != nil }) else { return nil }
      return Int64(digits.dropFirst(2), radix: 16).map { .integer($0) }
    }
    let signless =
      bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") ? bytes.dropFirst() : bytes[...]
    if !signless.isEmpty, signless.allSatisfy(isDigit), let value = Int64(digits) { return .integer(value) }
    return float(word)
  }

  /// A float in decimal notation, finite (`1e400` is no value, as it is no double).
  static func float(_ word: String) -> LibconfigValue? {
    let bytes = Array(word.utf8)
    guard bytes.contains(where: isDigit),
      bytes.allSatisfy({ isDigit($0) || Array("+-.eE".utf8).contains($0) }),
      let value = Double(word), value.isFinite
    else { return nil }
    return .float(value)
  }

  static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
