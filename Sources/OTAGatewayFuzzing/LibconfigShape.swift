import OTAFuzzing
import OTAGateway

/// The shape of a parsed libconfig value: nested no deeper than the parser's bound (32), each
/// group's names libconfig names (a letter or `*`, then letters, digits, `-`, `_`, `*`) and none
/// twice, arrays of scalars only, floats finite, and no more values than the text had bytes.
public enum LibconfigShape {
  public static let maximumDepth = 32

  public static func violations(_ root: LibconfigValue, inputCount: Int) -> [InvariantViolation] {
    var found: [InvariantViolation] = []
    var count = 0
    visit(root, depth: 0, count: &count, found: &found)
    if count - 1 > inputCount {
      found.append(InvariantViolation("value count", "\(count - 1) values from \(inputCount) bytes"))
    }
    return found
  }

  static func visit(_ value: LibconfigValue, depth: Int, count: inout Int, found: inout [InvariantViolation])
  {
    count += 1
    guard found.count < 20 else { return }
    switch value {
    case .group(let settings):
      if depth > maximumDepth { found.append(InvariantViolation("depth", "a group at depth \(depth)")) }
      var names: Set<String> = []
      for (name, inner) in settings {
        if !isName(name) { found.append(InvariantViolation("setting name", "'\(name)'")) }
        if !names.insert(name).inserted {
          found.append(InvariantViolation("setting name", "'\(name)' twice"))
        }
        visit(inner, depth: depth + 1, count: &count, found: &found)
      }
    case .list(let values):
      if depth > maximumDepth { found.append(InvariantViolation("depth", "a list at depth \(depth)")) }
      for inner in values { visit(inner, depth: depth + 1, count: &count, found: &found) }
    case .array(let values):
      if depth > maximumDepth { found.append(InvariantViolation("depth", "an array at depth \(depth)")) }
      for inner in values {
        switch inner {
        case .group, .list, .array:
          found.append(InvariantViolation("array of scalars", "an array holds \(inner)"))
        default: visit(inner, depth: depth + 1, count: &count, found: &found)
        }
      }
    case .float(let number):
      if !number.isFinite { found.append(InvariantViolation("finite float", "\(number)")) }
    case .string, .integer, .boolean: break
    }
  }

  public static func isName(_ name: String) -> Bool {
    let bytes = Array(name.utf8)
    guard let first = bytes.first, isLetter(first) || first == UInt8(ascii: "*") else { return false }
    return bytes.dropFirst().allSatisfy { byte in
      isLetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        || Array("-_*".utf8).contains(byte)
    }
  }

  static func isLetter(_ byte: UInt8) -> Bool {
    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
      || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
  }
}
