/// BLOCK HASHES's fields (opcode 0x09, Info features bit 2): which page of the running image's
/// block hashes the central wants, at the block size it chose. The device checks them (a power of
/// two from 512 to 4 MiB, a max count above 0, a first block inside the image) and answers at most
/// as many hashes as fit in one notification and as 4 MiB of the slot hold.
public struct BlockHashRequest: Equatable, Sendable {
  public static let smallestBlockSize: UInt32 = 512
  public static let largestBlockSize: UInt32 = 4 * 1024 * 1024
  /// The most running-slot bytes one answer reads and hashes, whatever the request.
  public static let maxBytesPerAnswer: UInt64 = 4 * 1024 * 1024

  public var blockSize: UInt32
  public var firstBlock: UInt32
  public var maxCount: UInt8

  public init(blockSize: UInt32, firstBlock: UInt32, maxCount: UInt8) {
    self.blockSize = blockSize
    self.firstBlock = firstBlock
    self.maxCount = maxCount
  }

  /// A block size the device takes: a power of two, 512 ≤ size ≤ 4 MiB.
  public static func isValidBlockSize(_ size: UInt32) -> Bool {
    size >= smallestBlockSize && size <= largestBlockSize && size & (size - 1) == 0
  }

  /// The most blocks one answer may read at `blockSize` (at least one).
  public static func blocksWithinReadBound(blockSize: UInt32) -> Int {
    guard blockSize > 0 else { return 1 }
    return max(1, Int(maxBytesPerAnswer / UInt64(blockSize)))
  }
}

/// BLOCK HASHES's success payload: `first block u32, total blocks u32`, then 8 bytes per hash (the
/// first 8 bytes of each block's SHA-256, as `BlockHashes` carries them), blocks `first ..< first +
/// count`. Total 0 (and no hashes) when the device knows no running image.
public struct BlockHashPage: Equatable, Sendable {
  /// The answer's own header: marker, opcode, status.
  public static let responseHeaderSize = 3
  /// First block and total, after the response header.
  public static let fieldsSize = 8
  /// The longest notification value ATT allows (Core spec, Vol 3, Part F, 3.2.9).
  public static let maximumValueSize = 512

  public var firstBlock: UInt32
  public var totalBlocks: UInt32
  public var hashes: [UInt64]

  public init(firstBlock: UInt32, totalBlocks: UInt32, hashes: [UInt64]) {
    self.firstBlock = firstBlock
    self.totalBlocks = totalBlocks
    self.hashes = hashes
  }

  /// How many hashes one answer holds at `mtu`: what fits in MTU − 3 (and in 512 bytes) after the
  /// response header and the two fields. At the minimum MTU (23) one; at most 62.
  public static func capacity(mtu: ATTMTU) -> Int {
    let value = min(mtu.maxNotifyValue, maximumValueSize)
    return max(0, (value - responseHeaderSize - fieldsSize) / BlockHashes.hashSize)
  }

  init(from reader: inout ByteReader) throws(WireError) {
    firstBlock = try reader.readU32()
    totalBlocks = try reader.readU32()
    let count = reader.remaining / BlockHashes.hashSize
    guard reader.remaining % BlockHashes.hashSize == 0 else {
      throw .invalidField("\(reader.remaining) hash bytes, not a multiple of 8")
    }
    guard count == 0 || UInt64(firstBlock) + UInt64(count) <= UInt64(totalBlocks) else {
      throw .invalidField("blocks \(firstBlock)+\(count) past the total \(totalBlocks)")
    }
    var hashes: [UInt64] = []
    hashes.reserveCapacity(count)
    for _ in 0..<count { hashes.append(try reader.readU64()) }
    self.hashes = hashes
  }

  func append(to bytes: inout [UInt8]) {
    bytes.appendU32(firstBlock)
    bytes.appendU32(totalBlocks)
    for hash in hashes { bytes.appendU64(hash) }
  }
}
