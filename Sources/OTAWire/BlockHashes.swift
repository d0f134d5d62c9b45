/// The value of the running-slot block hashes characteristic (d3df0006-…): the running image cut
/// into blocks, each named by the first 8 bytes of its SHA-256, so that a central with no base
/// image can send copies for the blocks the device already has. Layout (little-endian):
/// `block size u32, block count u32`, then 8 bytes per block; the last block may be short.
///
/// Eight bytes are enough here: a hash only proposes a copy, it proves nothing. A wrong match (a
/// 2^-64 collision, or a slot changed under its record) makes the copied bytes wrong, which the
/// WINDOW's CRC32 over the stored bytes catches; the central then resends that range as literal
/// bytes. It can cost a resend, never a wrong image.
public struct BlockHashes: Equatable, Sendable {
  public static let headerSize = 8
  public static let hashSize = 8
  /// The longest attribute value ATT allows (Core spec, Vol 3, Part F, 3.2.9).
  public static let maximumValueSize = 512
  /// As many blocks as fit in one attribute value.
  public static let maximumBlockCount = (maximumValueSize - headerSize) / hashSize
  public static let smallestBlockSize: UInt32 = 512

  public var blockSize: UInt32
  /// Per block, its truncated SHA-256 as a little-endian u64 of the digest's first 8 bytes.
  public var hashes: [UInt64]

  public init(blockSize: UInt32, hashes: [UInt64]) {
    self.blockSize = blockSize
    self.hashes = hashes
  }

  /// The block size a device uses for an image: the smallest power of two, at least 512, whose
  /// blocks fit in one attribute value (63 of them).
  public static func blockSize(forImageSize size: UInt32) -> UInt32 {
    var block = smallestBlockSize
    while UInt64(block) * UInt64(maximumBlockCount) < UInt64(size) { block *= 2 }
    return block
  }

  /// The number of blocks of an image of `size` bytes.
  public static func blockCount(imageSize size: UInt32, blockSize: UInt32) -> Int {
    guard blockSize > 0 else { return 0 }
    return Int((UInt64(size) + UInt64(blockSize) - 1) / UInt64(blockSize))
  }

  /// A digest's first 8 bytes as the u64 the value carries.
  public static func truncate(_ digest: some Collection<UInt8>) -> UInt64 {
    var value: UInt64 = 0
    for (index, byte) in digest.prefix(hashSize).enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
    return value
  }

  public init(bytes: some Collection<UInt8>) throws(WireError) {
    var reader = ByteReader(bytes)
    blockSize = try reader.readU32()
    let count = try reader.readU32()
    guard blockSize > 0 || count == 0 else { throw .invalidField("block size 0") }
    guard count <= UInt32(Self.maximumBlockCount) else { throw .invalidField("\(count) blocks") }
    var hashes: [UInt64] = []
    hashes.reserveCapacity(Int(count))
    for _ in 0..<count { hashes.append(try reader.readU64()) }
    try reader.expectEnd()
    self.hashes = hashes
  }

  public func append(to bytes: inout [UInt8]) {
    bytes.appendU32(blockSize)
    bytes.appendU32(UInt32(hashes.count))
    for hash in hashes { bytes.appendU64(hash) }
  }

  public var encoded: [UInt8] {
    var bytes: [UInt8] = []
    append(to: &bytes)
    return bytes
  }
}
