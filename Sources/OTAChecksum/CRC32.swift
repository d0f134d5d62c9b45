import CZlib

/// CRC-32 (ISO-HDLC, the zlib/PNG/Ethernet polynomial) computed by zlib, streaming.
/// `CRC32.checksum("123456789".utf8) == 0xCBF43926`.
public struct CRC32: Sendable, Equatable {
  public private(set) var value: UInt32 = 0

  public init() {}

  /// Carries on from a checksum computed earlier (zlib's crc32 takes the previous value).
  public init(continuing value: UInt32) { self.value = value }

  /// Folds more bytes into the running checksum.
  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    var base = bytes.baseAddress?.assumingMemoryBound(to: Bytef.self)
    var left = bytes.count
    var crc = UInt(value)
    // zlib takes a uInt length: feed very large buffers in pieces.
    while left > 0, let pointer = base {
      let piece = min(left, Int(UInt32.max / 2))
      crc = CZlib.crc32(crc, pointer, uInt(piece))
      base = pointer + piece
      left -= piece
    }
    value = UInt32(truncatingIfNeeded: crc)
  }

  public mutating func update(_ bytes: some Sequence<UInt8>) {
    let handled: Void? = bytes.withContiguousStorageIfAvailable { buffer in
      update(UnsafeRawBufferPointer(buffer))
    }
    if handled == nil {
      let copy = Array(bytes)
      copy.withUnsafeBytes { update($0) }
    }
  }

  public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
    var crc = CRC32()
    crc.update(bytes)
    return crc.value
  }

  /// The CRC of A followed by B, from the CRCs of A and B and the length of B (zlib's crc32_combine).
  public static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
    UInt32(truncatingIfNeeded: crc32_combine(UInt(first), UInt(second), Int(secondLength)))
  }
}
