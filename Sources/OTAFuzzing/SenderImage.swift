import OTAChecksum

/// The image a fuzzed central sends: deterministic bytes, so chunks and CRCs can be made right.
public struct SenderImage: Sendable {
  public let seed: UInt8

  public init(seed: UInt8) { self.seed = seed }

  public func byte(at offset: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: offset &* 31 &+ (offset >> 8) &* 7) ^ seed
  }

  public func bytes(_ range: Range<Int>) -> [UInt8] { range.map(byte(at:)) }

  public func crc32(_ range: Range<Int>) -> UInt32 { CRC32.checksum(bytes(range)) }
}
