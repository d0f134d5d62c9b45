import OTAChecksum
import OTAWire

/// One copy of an `AlternatingRecord`: a sequence number, the payload, and a CRC32 over both, so a
/// copy that a power cut tore (old and new sectors mixed, or a half-written tail) fails its check.
///
/// Layout (little-endian; written to disk: never reorder):
///     0 magic "OTAR"   4 sequence u32   8 payload length u32   12 payload   12+n CRC32 of bytes 0..<12+n
public struct RecordCopy: Equatable, Sendable {
  static let magic: [UInt8] = Array("OTAR".utf8)
  /// The bytes a copy adds to its payload: magic, sequence, length, CRC.
  public static let overhead = 16

  /// Counts the writes of the record, wrapping at 2^32: the higher one (in serial-number order) is
  /// the newer copy.
  public var sequence: UInt32
  public var payload: [UInt8]

  public init(sequence: UInt32, payload: [UInt8]) {
    self.sequence = sequence
    self.payload = payload
  }

  /// Decodes the copy at the start of `bytes` (a place's bytes; what follows the copy is ignored),
  /// trusting nothing: a short, torn or never-written place throws.
  public init(bytes: ArraySlice<UInt8>) throws(WireError) {
    var reader = ByteReader(Array(bytes.prefix(Self.overhead - 4)))
    guard bytes.count >= Self.overhead, Array(try reader.readBytes(4)) == Self.magic else {
      throw .malformed("record copy magic")
    }
    sequence = try reader.readU32()
    let length = Int(try reader.readU32())
    guard length <= bytes.count - Self.overhead else {
      throw .malformed("record copy of \(length) bytes in a place of \(bytes.count)")
    }
    let start = bytes.startIndex
    let body = bytes[start..<start + 12 + length]
    var tail = ByteReader(Array(bytes[start + 12 + length..<start + Self.overhead + length]))
    guard try tail.readU32() == CRC32.checksum(body) else { throw .malformed("record copy checksum") }
    payload = Array(bytes[start + 12..<start + 12 + length])
  }

  public var encoded: [UInt8] {
    var bytes = Self.magic
    bytes.reserveCapacity(Self.overhead + payload.count)
    bytes.appendU32(sequence)
    bytes.appendU32(UInt32(payload.count))
    bytes.append(contentsOf: payload)
    bytes.appendU32(CRC32.checksum(bytes))
    return bytes
  }

  /// True when this copy was written after `other`: serial-number arithmetic (RFC 1982), so the
  /// copy after sequence 0xFFFF_FFFF is sequence 0 and still newer.
  public func isNewer(than other: RecordCopy) -> Bool {
    Int32(bitPattern: sequence &- other.sequence) > 0
  }
}
