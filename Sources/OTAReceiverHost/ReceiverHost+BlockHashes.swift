import OTAStorage
import OTATrust
import OTAWire

/// What identifies the running image for the block-hash cache: its slot, size and CRC32.
struct RunningImageIdentity: Equatable, Sendable {
  var slot: SlotID
  var size: UInt32
  var crc32: UInt32
}

extension ReceiverHost {
  /// The running slot's block hashes (docs/PROTOCOL.md, d3df0006-…): computed on demand, read
  /// through the slot's reader block by block, and cached by the running image's identity. Empty
  /// (block size 0, no blocks) when the boot state knows no running image, or the slot cannot be
  /// read (logged by the caller through `storageFailures`).
  public mutating func blockHashes() -> BlockHashes {
    let image = runningImage
    let identity = RunningImageIdentity(slot: running, size: image.size, crc32: image.crc32)
    if let cached = blockHashCache, cached.identity == identity { return cached.value }
    guard image.size > 0 else { return BlockHashes(blockSize: 0, hashes: []) }
    let blockSize = BlockHashes.blockSize(forImageSize: image.size)
    let hashes: [UInt64]
    do {
      hashes = try runningBlockHashes(
        blockSize: blockSize, first: 0,
        count: BlockHashes.blockCount(imageSize: image.size, blockSize: blockSize), imageSize: image.size)
    } catch {
      noteStorageFailure(error)
      return BlockHashes(blockSize: 0, hashes: [])
    }
    let value = BlockHashes(blockSize: blockSize, hashes: hashes)
    blockHashCache = (identity, value)
    return value
  }

  /// The truncated SHA-256 of `count` blocks of the running slot from block `first`, the last one
  /// short at the image's end: the one-value list's work and BLOCK HASHES's (features bit 2), whose
  /// `count` the engine bounds to 4 MiB of reading. A slot that cannot be read throws (the list is
  /// then empty, the answer 0x0B).
  func runningBlockHashes(blockSize: UInt32, first: UInt32, count: Int, imageSize: UInt32)
    throws(StorageError) -> [UInt64]
  {
    let reader = try storage.slots.reader(running)
    var hashes: [UInt64] = []
    hashes.reserveCapacity(count)
    for index in 0..<UInt64(count) {
      let offset = (UInt64(first) + index) * UInt64(blockSize)
      guard offset < UInt64(imageSize) else { break }
      let length = Int(min(UInt64(blockSize), UInt64(imageSize) - offset))
      hashes.append(BlockDigest.truncatedSHA256(try reader.read(at: offset, count: length)))
    }
    return hashes
  }
}
