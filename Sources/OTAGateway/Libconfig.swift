/// The libconfig syntax SWUpdate's sw-description is written in: settings `name = value;` (or
/// `name: value`), groups `{ ... }`, lists `( ... )`, arrays `[ ... ]`, strings (adjacent ones
/// joined), integers, floats, booleans, and `#`, `//` and `/* */` comments. A parser for that text,
/// bounded in depth and size, with the line of every error.
public indirect enum LibconfigValue: Equatable, Sendable {
  case string(String)
  case integer(Int64)
  case float(Double)
  case boolean(Bool)
  /// Named settings, in order.
  case group([(name: String, value: LibconfigValue)])
  /// Values of any kind.
  case list([LibconfigValue])
  /// Scalars.
  case array([LibconfigValue])

  public static func == (lhs: LibconfigValue, rhs: LibconfigValue) -> Bool {
    switch (lhs, rhs) {
    case (.string(let a), .string(let b)): a == b
    case (.integer(let a), .integer(let b)): a == b
    case (.float(let a), .float(let b)): a == b
    case (.boolean(let a), .boolean(let b)): a == b
    case (.group(let a), .group(let b)): a.map(\.name) == b.map(\.name) && a.map(\.value) == b.map(\.value)
    case (.list(let a), .list(let b)), (.array(let a), .array(let b)): a == b
    default: false
    }
  }

  /// The setting `name` of a group.
  public subscript(name: String) -> LibconfigValue? {
    guard case .group(let settings) = self else { return nil }
    return settings.first { $0.name == name }?.value
  }

  public var string: String? { if case .string(let text) = self { text } else { nil } }

  /// A list's or an array's elements.
  public var elements: [LibconfigValue]? {
    switch self {
    case .list(let values), .array(let values): values
    default: nil
    }
  }

  public var settings: [(name: String, value: LibconfigValue)]? {
    if case .group(let settings) = self { settings } else { nil }
  }
}

public struct LibconfigError: Error, Equatable, Sendable, CustomStringConvertible {
  public var line: Int
  public var message: String
  public var description: String { "line \(line): \(message)" }
}

/// Parses libconfig text into its top-level group.
public struct LibconfigParser {
  static let maximumDepth = 32
  static let maximumBytes = 1 << 20
  private let text: [UInt8]
  private var index = 0
  private var line = 1
  private var depth = 0

  public static func parse(_ text: String) throws(LibconfigError) -> LibconfigValue {
    var parser = LibconfigParser(text: Array(text.utf8))
    guard parser.text.count <= maximumBytes else {
      throw LibconfigError(line: 1, message: "longer than \(maximumBytes) bytes")
    }
    let settings = try parser.settings(until: nil)
    return .group(settings)
  }

  private init(text: [UInt8]) { self.text = text }

  private mutating func settings(until close: UInt8?) throws(LibconfigError) -> [(
    name: String, value: LibconfigValue
  )] {
    var result: [(name: String, value: LibconfigValue)] = []
    // Each name checked once: against all before it, 1 MiB of settings took seconds.
    var names: Set<String> = []
    while true {
      try skipSpace()
      guard let byte = peek else {
        if close != nil { throw fail("the group is not closed") }
        return result
      }
      if byte == close {
        index += 1
        return result
      }
      let name = try readName()
      try skipSpace()
      guard let separator = peek, separator == UInt8(ascii: "=") || separator == UInt8(ascii: ":") else {
        throw fail("expected '=' or ':' after '\(name)'")
      }
      index += 1
      let value = try readValue()
      guard names.insert(name).inserted else { throw fail("'\(name)' is set twice") }
      result.append((name, value))
      try skipSpace()
      if let end = peek, end == UInt8(ascii: ";") || end == UInt8(ascii: ",") { index += 1 }
    }
  }

  private mutating func readValue() throws(LibconfigError) -> LibconfigValue {
    try skipSpace()
    guard let byte = peek else { throw fail("a value is missing at the end") }
    switch byte {
    case UInt8(ascii: "{"):
      index += 1
      try enter()
      defer { depth -= 1 }
      return .group(try settings(until: UInt8(ascii: "}")))
    case UInt8(ascii: "("):
      index += 1
      try enter()
      defer { depth -= 1 }
      return .list(try values(until: UInt8(ascii: ")")))
    case UInt8(ascii: "["):
      index += 1
      try enter()
      defer { depth -= 1 }
      let values = try values(until: UInt8(ascii: "]"))
      for value in values {
        switch value {
        case .group, .list, .array: throw fail("an array holds scalars only")
        default: break
        }
      }
      return .array(values)
    case UInt8(ascii: "\""):
      var joined = try readString()
      while true {
        try skipSpace()
        guard peek == UInt8(ascii: "\"") else { break }
        joined += try readString()
      }
      return .string(joined)
    default:
      return try readScalar()
    }
  }

  private mutating func values(until close: UInt8) throws(LibconfigError) -> [LibconfigValue] {
    var result: [LibconfigValue] = []
    try skipSpace()
    if peek == close {
      index += 1
      return result
    }
    while true {
      result.append(try readValue())
      try skipSpace()
      guard let byte = peek else { throw fail("'\(Character(UnicodeScalar(close)))' is missing") }
      index += 1
      if byte == close { return result }
      guard byte == UInt8(ascii: ",") else { throw fail("expected ',' between values") }
    }
  }

  private mutating func enter() throws(LibconfigError) {
    depth += 1
    guard depth <= Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth)") }
  }

  private mutating func readName() throws(LibconfigError) -> String {
    let start = index
    while let byte = peek, Self.isNameByte(byte, first: index == start) { index += 1 }
    guard index > start else { throw fail("expected a setting's name") }
    return String(decoding: text[start..<index], as: UTF8.self)
  }

  static func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
    let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    if letter || byte == UInt8(ascii: "*") { return true }
    if first { return false }
    return (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
      || byte == UInt8(ascii: "_")
  }

  private mutating func readString() throws(LibconfigError) -> String {
    index += 1
    var bytes: [UInt8] = []
    while true {
      guard let byte = peek else { throw fail("a string is not closed") }
      index += 1
      switch byte {
      case UInt8(ascii: "\""):
        return String(decoding: bytes, as: UTF8.self)
      case UInt8(ascii: "\n"):
        throw fail("a string runs past the end of its line")
      case UInt8(ascii: "\\"):
        guard let escaped = peek else { throw fail("a string is not closed") }
        index += 1
        switch escaped {
        case UInt8(ascii: "n"): bytes.append(0x0A)
        case UInt8(ascii: "t"): bytes.append(0x09)
        case UInt8(ascii: "r"): bytes.append(0x0D)
        case UInt8(ascii: "f"): bytes.append(0x0C)
        case UInt8(ascii: "\\"), UInt8(ascii: "\""): bytes.append(escaped)
        case UInt8(ascii: "x"):
          // Two digits, no sign: UInt8("+F", radix: 16) would take "\\x+F".
          guard index + 2 <= text.count, let value = ASCIIHex.value(text[index..<index + 2]) else {
            throw fail("a \\x escape needs two hexadecimal digits")
          }
          bytes.append(UInt8(value))
          index += 2
        default: throw fail("unknown escape '\\\(Character(UnicodeScalar(escaped)))'")
        }
      default:
        bytes.append(byte)
      }
    }
  }

  private mutating func readScalar() throws(LibconfigError) -> LibconfigValue {
    let start = index
    while let byte = peek,
      !(byte == UInt8(ascii: ";") || byte == UInt8(ascii: ",") || byte == UInt8(ascii: ")")
        || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") || byte <= 0x20 || byte == UInt8(ascii: "#")
        || byte == UInt8(ascii: "/"))
    {
      index += 1
    }
    let word = String(decoding: text[start..<index], as: UTF8.self)
    if let value = LibconfigScalar.value(word) { return value }
    throw fail(word.isEmpty ? "a value is missing" : "'\(word)' is not a value")
  }

  private var peek: UInt8? { index < text.count ? text[index] : nil }

  private mutating func skipSpace() throws(LibconfigError) {
    while let byte = peek {
      if byte == UInt8(ascii: "\n") {
        line += 1
        index += 1
      } else if byte <= 0x20 {
        index += 1
      } else if byte == UInt8(ascii: "#") || starts(with: "//") {
        while let next = peek, next != UInt8(ascii: "\n") { index += 1 }
      } else if starts(with: "/*") {
        index += 2
        while !starts(with: "*/") {
          guard let next = peek else { throw fail("a comment is not closed") }
          if next == UInt8(ascii: "\n") { line += 1 }
          index += 1
        }
        index += 2
      } else {
        return
      }
    }
  }

  private func starts(with prefix: String) -> Bool {
    let bytes = Array(prefix.utf8)
    return index + bytes.count <= text.count && Array(text[index..<index + bytes.count]) == bytes
  }

  private func fail(_ message: String) -> LibconfigError { LibconfigError(line: line, message: message) }
}
