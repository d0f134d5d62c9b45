/// Reads little-endian integers from a byte buffer, failing with `WireError` instead of trapping.
public struct ByteReader: Sendable {
  public let bytes: ArraySlice<UInt8>
  public private(set) var position: Int

  public init(_ bytes: some Collection<UInt8>) {
    self.bytes = ArraySlice(bytes)
    self.position = self.bytes.startIndex
  }

  public var remaining: Int { bytes.endIndex - position }
  public var isAtEnd: Bool { position == bytes.endIndex }

  public mutating func readU8() throws(WireError) -> UInt8 {
    guard remaining >= 1 else { throw .truncated(needed: 1, available: remaining) }
    defer { position += 1 }
    return bytes[position]
  }

  public mutating func readU16() throws(WireError) -> UInt16 {
    UInt16(truncatingIfNeeded: try readLittleEndian(byteCount: 2))
  }

  public mutating func readU32() throws(WireError) -> UInt32 {
    UInt32(truncatingIfNeeded: try readLittleEndian(byteCount: 4))
  }

  public mutating func readU64() throws(WireError) -> UInt64 {
    try readLittleEndian(byteCount: 8)
  }

  public mutating func readBytes(_ count: Int) throws(WireError) -> ArraySlice<UInt8> {
    guard count >= 0, remaining >= count else { throw .truncated(needed: count, available: remaining) }
    defer { position += count }
    return bytes[position..<position + count]
  }

  public mutating func readRest() -> ArraySlice<UInt8> {
    defer { position = bytes.endIndex }
    return bytes[position...]
  }

  /// Throws unless every byte has been consumed: fixed-size records reject trailing bytes.
  public func expectEnd() throws(WireError) {
    guard isAtEnd else { throw .trailingBytes(count: remaining) }
  }

  private mutating func readLittleEndian(byteCount: Int) throws(WireError) -> UInt64 {
    guard remaining >= byteCount else { throw .truncated(needed: byteCount, available: remaining) }
    var value: UInt64 = 0
    for index in 0..<byteCount {
      value |= UInt64(bytes[position + index]) << (8 * UInt64(index))
    }
    position += byteCount
    return value
  }
}

/// Little-endian appends, the counterpart of `ByteReader`.
extension Array where Element == UInt8 {
  public mutating func appendU8(_ value: UInt8) { append(value) }
  public mutating func appendU16(_ value: UInt16) { appendLittleEndian(UInt64(value), byteCount: 2) }
  public mutating func appendU32(_ value: UInt32) { appendLittleEndian(UInt64(value), byteCount: 4) }
  public mutating func appendU64(_ value: UInt64) { appendLittleEndian(value, byteCount: 8) }

  private mutating func appendLittleEndian(_ value: UInt64, byteCount: Int) {
    for index in 0..<byteCount { append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
  }
}
