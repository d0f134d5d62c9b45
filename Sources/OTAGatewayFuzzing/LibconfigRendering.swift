import OTAGateway

/// A libconfig value written as libconfig text, the fuzz checks' own writer (the parser has none):
/// the root group's settings one per line, nested groups in braces, lists in parentheses, arrays in
/// brackets; strings with `\\`, `\"`, `\n`, `\t`, `\r`, `\f` and `\xNN` for the other control bytes;
/// floats in Swift's shortest form that reads back exactly (`5.0`, `1e-07`).
public enum LibconfigRendering {
  public static func text(_ root: LibconfigValue) -> String {
    guard case .group(let settings) = root else { return value(root) }
    return settings.map { "\($0.name) = \(value($0.value));\n" }.joined()
  }

  static func value(_ value: LibconfigValue) -> String {
    switch value {
    case .string(let text): quoted(text)
    case .integer(let number): "\(number)"
    case .float(let number): "\(number)"
    case .boolean(let flag): flag ? "true" : "false"
    case .group(let settings): "{ " + settings.map { "\($0.name) = \(Self.value($0.value)); " }.joined() + "}"
    case .list(let values): "( " + values.map(Self.value).joined(separator: ", ") + " )"
    case .array(let values): "[ " + values.map(Self.value).joined(separator: ", ") + " ]"
    }
  }

  static func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\\": out += "\\\\"
      case "\"": out += "\\\""
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r": out += "\\r"
      case "\u{0C}": out += "\\f"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        let hex = String(scalar.value, radix: 16, uppercase: true)
        out += "\\x" + (hex.count == 1 ? "0" : "") + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}
