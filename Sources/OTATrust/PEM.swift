/// One PEM block: `-----BEGIN LABEL-----`, base64 of DER bytes in lines, `-----END LABEL-----`.
/// Text outside the block (comments, a second block) is ignored when decoding; the first block wins.
public struct PEMBlock: Sendable, Equatable {
  public var label: String
  public var der: [UInt8]

  public init(label: String, der: [UInt8]) {
    self.label = label
    self.der = der
  }

  /// Finds and decodes the first PEM block in `text`.
  public init(text: String) throws(KeyError) {
    let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: " \t\r") }
    guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("-----") }) else {
      throw .notPEM("no '-----BEGIN ...-----' line")
    }
    let label = String(lines[begin].dropFirst("-----BEGIN ".count).dropLast("-----".count))
    let endLine = "-----END \(label)-----"
    guard let end = lines[(begin + 1)...].firstIndex(of: endLine) else {
      throw .notPEM("no '\(endLine)' line")
    }
    let body = lines[(begin + 1)..<end]
    if body.contains(where: { $0.contains(":") }) {
      throw .unsupported(
        "the PEM block has headers (an encrypted legacy key?); use an unencrypted PKCS#8 key")
    }
    guard let der = Base64.decode(body.joined()) else {
      throw .notPEM("the '\(label)' block is not valid base64")
    }
    self.init(label: label, der: der)
  }

  /// The block as text, 64 base64 characters per line, with a final newline.
  public var text: String {
    let encoded = Array(Base64.encode(der))
    var lines = ["-----BEGIN \(label)-----"]
    var start = 0
    while start < encoded.count {
      let end = min(start + 64, encoded.count)
      lines.append(String(encoded[start..<end]))
      start = end
    }
    lines.append("-----END \(label)-----")
    return lines.joined(separator: "\n") + "\n"
  }
}

extension Substring {
  fileprivate func trimmingCharacters(in set: String) -> String {
    let characters = Set(set)
    var slice = self[...]
    while let first = slice.first, characters.contains(first) { slice = slice.dropFirst() }
    while let last = slice.last, characters.contains(last) { slice = slice.dropLast() }
    return String(slice)
  }
}

/// RFC 4648 base64 with padding, as PEM uses it.
enum Base64 {
  private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  static func encode(_ bytes: [UInt8]) -> String {
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count + 2) / 3 * 4)
    var index = 0
    while index < bytes.count {
      let count = min(3, bytes.count - index)
      var group: UInt32 = 0
      for offset in 0..<3 {
        group <<= 8
        if offset < count { group |= UInt32(bytes[index + offset]) }
      }
      for offset in 0..<4 {
        if offset <= count {
          out.append(alphabet[Int((group >> UInt32(18 - 6 * offset)) & 0x3f)])
        } else {
          out.append(UInt8(ascii: "="))
        }
      }
      index += 3
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// nil for characters outside the alphabet, a length that is not a multiple of 4, or misplaced `=`.
  static func decode(_ text: String) -> [UInt8]? {
    let characters = Array(text.utf8)
    guard characters.count % 4 == 0 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(characters.count / 4 * 3)
    var index = 0
    while index < characters.count {
      var group: UInt32 = 0
      var padding = 0
      for offset in 0..<4 {
        let character = characters[index + offset]
        group <<= 6
        if character == UInt8(ascii: "=") {
          // Padding only in the last group's last one or two places.
          guard index + 4 == characters.count, offset >= 2 else { return nil }
          padding += 1
        } else {
          guard padding == 0, let value = sextet(character) else { return nil }
          group |= UInt32(value)
        }
      }
      let bytes = [
        UInt8(truncatingIfNeeded: group >> 16), UInt8(truncatingIfNeeded: group >> 8),
        UInt8(truncatingIfNeeded: group),
      ]
      out.append(contentsOf: bytes[0..<(3 - padding)])
      index += 4
    }
    return out
  }

  private static func sextet(_ character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
    case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
    case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
    case UInt8(ascii: "+"): 62
    case UInt8(ascii: "/"): 63
    default: nil
    }
  }
}
