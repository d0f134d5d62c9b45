/// One data write while Features bit 1 (`operations`) is on: target bytes `[offset, offset + length)`
/// described rather than carried. Layout (little-endian): `offset u32, kind u8, fields, payload`.
///
///     kind 0x00 raw      payload = the bytes
///     kind 0x01 deflate  length u32, payload = raw deflate inflating to exactly `length` bytes
///     kind 0x02 copy     source u32, length u32 (no payload): the running slot's [source, source+length)
///     kind 0x03 patch    source u32, length u32, payload = raw deflate of `length` differences:
///                        target byte i = running byte (source + i) + difference i (mod 256)
///     kind 0x04 zstd part  part u32 (bit 31: the frame's last part; bits 0-30: where the payload
///                        lies in the frame), payload = those bytes of one zstd frame whose target
///                        bytes start at `offset` (features bit 4; the frame states its length)
///
/// Decoding checks only the shape (a field missing, an empty payload, a zero length, bytes after a
/// copy); the limits that depend on the transfer (the window, the running image) are the receiver's.
public struct DataOperation: Equatable, Sendable {
  public enum Kind: UInt8, Sendable, CaseIterable {
    case raw = 0x00
    case deflate = 0x01
    case copy = 0x02
    case patch = 0x03
    case zstdPart = 0x04
  }

  public enum Body: Equatable, Sendable {
    case raw(ArraySlice<UInt8>)
    case deflate(length: UInt32, compressed: ArraySlice<UInt8>)
    case copy(source: UInt32, length: UInt32)
    case patch(source: UInt32, length: UInt32, differences: ArraySlice<UInt8>)
    /// Bytes `[position, position + bytes.count)` of a zstd frame; `last` on the part that ends it.
    case zstdPart(position: UInt32, last: Bool, bytes: ArraySlice<UInt8>)
  }

  /// Bit 31 of a zstd part's `part` field: this part ends the frame.
  public static let lastPartFlag: UInt32 = 1 << 31

  /// Offset and kind: the header every operation starts with.
  public static let headerSize = 5

  public var offset: UInt32
  public var body: Body

  public init(offset: UInt32, body: Body) {
    self.offset = offset
    self.body = body
  }

  public init(bytes: [UInt8]) throws(WireError) {
    var reader = ByteReader(bytes)
    offset = try reader.readU32()
    let rawKind = try reader.readU8()
    guard let kind = Kind(rawValue: rawKind) else { throw .invalidField("operation kind \(rawKind)") }
    switch kind {
    case .raw:
      body = .raw(try Self.payload(&reader))
    case .deflate:
      let length = try Self.length(&reader)
      body = .deflate(length: length, compressed: try Self.payload(&reader))
    case .copy:
      let source = try reader.readU32()
      let length = try Self.length(&reader)
      try reader.expectEnd()
      body = .copy(source: source, length: length)
    case .patch:
      let source = try reader.readU32()
      let length = try Self.length(&reader)
      body = .patch(source: source, length: length, differences: try Self.payload(&reader))
    case .zstdPart:
      let part = try reader.readU32()
      body = .zstdPart(
        position: part & ~Self.lastPartFlag, last: part & Self.lastPartFlag != 0,
        bytes: try Self.payload(&reader))
    }
  }

  public var kind: Kind {
    switch body {
    case .raw: .raw
    case .deflate: .deflate
    case .copy: .copy
    case .patch: .patch
    case .zstdPart: .zstdPart
    }
  }

  /// How many target bytes the operation produces: 0 for a zstd part (its frame states them).
  public var length: UInt32 {
    switch body {
    case .raw(let bytes): UInt32(clamping: bytes.count)
    case .deflate(let length, _), .copy(_, let length), .patch(_, let length, _): length
    case .zstdPart: 0
    }
  }

  /// One past the last target byte, computed wide so a lying offset cannot wrap.
  public var end: UInt64 { UInt64(offset) + UInt64(length) }

  public var targetRange: Range<UInt64> { UInt64(offset)..<end }

  /// The running slot's bytes it reads, for copy and patch.
  public var sourceRange: Range<UInt64>? {
    switch body {
    case .copy(let source, let length), .patch(let source, let length, _):
      UInt64(source)..<UInt64(source) + UInt64(length)
    case .raw, .deflate, .zstdPart: nil
    }
  }

  public func append(to bytes: inout [UInt8]) {
    bytes.appendU32(offset)
    bytes.appendU8(kind.rawValue)
    switch body {
    case .raw(let payload):
      bytes.append(contentsOf: payload)
    case .deflate(let length, let compressed):
      bytes.appendU32(length)
      bytes.append(contentsOf: compressed)
    case .copy(let source, let length):
      bytes.appendU32(source)
      bytes.appendU32(length)
    case .patch(let source, let length, let differences):
      bytes.appendU32(source)
      bytes.appendU32(length)
      bytes.append(contentsOf: differences)
    case .zstdPart(let position, let last, let payload):
      bytes.appendU32(position | (last ? Self.lastPartFlag : 0))
      bytes.append(contentsOf: payload)
    }
  }

  public var encoded: [UInt8] {
    var bytes: [UInt8] = []
    append(to: &bytes)
    return bytes
  }

  /// The bytes a write of each kind takes besides its payload.
  public static func overhead(_ kind: Kind) -> Int {
    switch kind {
    case .raw: headerSize
    case .deflate, .zstdPart: headerSize + 4
    case .copy, .patch: headerSize + 8
    }
  }

  private static func payload(_ reader: inout ByteReader) throws(WireError) -> ArraySlice<UInt8> {
    guard reader.remaining > 0 else { throw .truncated(needed: 1, available: 0) }
    return reader.readRest()
  }

  private static func length(_ reader: inout ByteReader) throws(WireError) -> UInt32 {
    let length = try reader.readU32()
    guard length > 0 else { throw .invalidField("operation length 0") }
    return length
  }
}
