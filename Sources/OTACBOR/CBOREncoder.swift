extension CBOR {
  /// The item in definite lengths and shortest heads: the canonical form the decoder reads back.
  public var encoded: [UInt8] {
    var bytes: [UInt8] = []
    append(to: &bytes)
    return bytes
  }

  public func append(to bytes: inout [UInt8]) {
    switch self {
    case .unsigned(let value): Self.appendHead(0, value, to: &bytes)
    case .negative(let value): Self.appendHead(1, value, to: &bytes)
    case .bytes(let value):
      Self.appendHead(2, UInt64(value.count), to: &bytes)
      bytes += value
    case .text(let value):
      let utf8 = Array(value.utf8)
      Self.appendHead(3, UInt64(utf8.count), to: &bytes)
      bytes += utf8
    case .array(let elements):
      Self.appendHead(4, UInt64(elements.count), to: &bytes)
      for element in elements { element.append(to: &bytes) }
    case .map(let entries):
      Self.appendHead(5, UInt64(entries.count), to: &bytes)
      for entry in entries {
        entry.key.append(to: &bytes)
        entry.value.append(to: &bytes)
      }
    case .bool(let value): bytes.append(value ? 0xF5 : 0xF4)
    case .null: bytes.append(0xF6)
    }
  }

  private static func appendHead(_ major: UInt8, _ argument: UInt64, to bytes: inout [UInt8]) {
    let type = major << 5
    switch argument {
    case 0..<24: bytes.append(type | UInt8(argument))
    case 24...0xFF: bytes += [type | 24, UInt8(argument)]
    case 0x100...0xFFFF: appendBigEndian(type | 25, argument, count: 2, to: &bytes)
    case 0x1_0000...0xFFFF_FFFF: appendBigEndian(type | 26, argument, count: 4, to: &bytes)
    default: appendBigEndian(type | 27, argument, count: 8, to: &bytes)
    }
  }

  private static func appendBigEndian(_ head: UInt8, _ value: UInt64, count: Int, to bytes: inout [UInt8]) {
    bytes.append(head)
    for shift in stride(from: (count - 1) * 8, through: 0, by: -8) {
      bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
    }
  }
}
