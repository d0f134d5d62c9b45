/// A strict decoder: exactly one item, within `CBORLimits`. Definite and indefinite lengths are both
/// accepted for strings, arrays and maps (some MCUmgr clients send indefinite maps); integers need
/// not be in their shortest form. Anything else malformed is a `CBORError`.
public struct CBORDecoder {
  private let bytes: [UInt8]
  private let limits: CBORLimits
  private var index = 0
  private var items = 0

  /// Decodes `bytes` as exactly one item.
  public static func decode(_ bytes: [UInt8], limits: CBORLimits = CBORLimits()) throws(CBORError) -> CBOR {
    guard bytes.count <= limits.maxBytes else { throw .tooLarge(limit: limits.maxBytes) }
    var decoder = CBORDecoder(bytes: bytes, limits: limits)
    let item = try decoder.item(depth: 1)
    guard decoder.index == bytes.count else { throw .trailingBytes(count: bytes.count - decoder.index) }
    return item
  }

  private init(bytes: [UInt8], limits: CBORLimits) {
    self.bytes = bytes
    self.limits = limits
  }

  private static let breakByte: UInt8 = 0xFF

  private mutating func byte() throws(CBORError) -> UInt8 {
    guard index < bytes.count else { throw .truncated }
    defer { index += 1 }
    return bytes[index]
  }

  /// The argument of a head: nil for an indefinite length (additional information 31).
  private mutating func argument(_ info: UInt8) throws(CBORError) -> UInt64? {
    switch info {
    case 0..<24: return UInt64(info)
    case 24...27:
      let count = 1 << Int(info - 24)
      var value: UInt64 = 0
      for _ in 0..<count { value = value << 8 | UInt64(try byte()) }
      return value
    case 31: return nil
    default: throw .reservedAdditionalInfo(info)
    }
  }

  private mutating func count() throws(CBORError) {
    items += 1
    guard items <= limits.maxItems else { throw .tooManyItems(limit: limits.maxItems) }
  }

  private mutating func item(depth: Int) throws(CBORError) -> CBOR {
    try count()
    let head = try byte()
    if head == Self.breakByte { throw .unexpectedBreak }
    let major = head >> 5
    let info = head & 0x1F
    let argument = try argument(info)
    switch major {
    case 0:
      guard let argument else { throw .invalidIndefiniteLength }
      return .unsigned(argument)
    case 1:
      guard let argument else { throw .invalidIndefiniteLength }
      return .negative(argument)
    case 2:
      return .bytes(try string(argument, major: 2))
    case 3:
      let raw = try string(argument, major: 3)
      guard let text = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8 }
      return .text(text)
    case 4:
      guard depth <= limits.maxDepth else { throw .tooDeep(limit: limits.maxDepth) }
      var elements: [CBOR] = []
      try forEachElement(argument) { (decoder: inout CBORDecoder) throws(CBORError) in
        elements.append(try decoder.item(depth: depth + 1))
      }
      return .array(elements)
    case 5:
      guard depth <= limits.maxDepth else { throw .tooDeep(limit: limits.maxDepth) }
      var entries: [CBOR.Entry] = []
      try forEachElement(argument) { (decoder: inout CBORDecoder) throws(CBORError) in
        let key = try decoder.item(depth: depth + 1)
        let value = try decoder.item(depth: depth + 1)
        guard !entries.contains(where: { $0.key == key }) else { throw .duplicateKey }
        entries.append(CBOR.Entry(key, value))
      }
      return .map(entries)
    case 6:
      throw .unsupported("tag")
    default:
      switch info {
      case 20: return .bool(false)
      case 21: return .bool(true)
      case 22: return .null
      case 25, 26, 27: throw .unsupported("float")
      case 31: throw .invalidIndefiniteLength
      default: throw .unsupported("simple value")
      }
    }
  }

  /// Calls `body` once per element of a definite count, or until the break of an indefinite one.
  private mutating func forEachElement(
    _ argument: UInt64?, _ body: (inout CBORDecoder) throws(CBORError) -> Void
  ) throws(CBORError) {
    if let argument {
      // Every element takes at least one byte: a count past the input is a lie, refused before looping.
      guard argument <= UInt64(bytes.count - index) else { throw .truncated }
      for _ in 0..<argument { try body(&self) }
    } else {
      while true {
        guard index < bytes.count else { throw .truncated }
        if bytes[index] == Self.breakByte {
          index += 1
          return
        }
        try body(&self)
      }
    }
  }

  /// The bytes of a byte or text string; an indefinite one is the concatenation of definite chunks
  /// of the same major type.
  private mutating func string(_ argument: UInt64?, major: UInt8) throws(CBORError) -> [UInt8] {
    if let argument { return try take(argument) }
    var joined: [UInt8] = []
    while true {
      let head = try byte()
      if head == Self.breakByte { return joined }
      guard head >> 5 == major, head & 0x1F != 31 else { throw .invalidIndefiniteLength }
      try count()
      guard let length = try self.argument(head & 0x1F) else { throw .invalidIndefiniteLength }
      joined += try take(length)
    }
  }

  private mutating func take(_ length: UInt64) throws(CBORError) -> [UInt8] {
    guard length <= UInt64(bytes.count - index) else { throw .truncated }
    let end = index + Int(length)
    defer { index = end }
    return Array(bytes[index..<end])
  }
}
