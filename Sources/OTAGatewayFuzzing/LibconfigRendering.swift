import OTAGateway

/// A libconfig value written as libconfig text, the fuzz checks' own writer (the parser has none;
/// strings are quoted as `SWDescription` writes them):
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
    case .string(let text): SWDescription.quoted(text)
    case .integer(let number): "\(number)"
    case .float(let number): "\(number)"
    case .boolean(let flag): flag ? "true" : "false"
    case .group(let settings): "{ " + settings.map { "\($0.name) = \(Self.value($0.value)); " }.joined() + "}"
    case .list(let values): "( " + values.map(Self.value).joined(separator: ", ") + " )"
    case .array(let values): "[ " + values.map(Self.value).joined(separator: ", ") + " ]"
    }
  }
}
