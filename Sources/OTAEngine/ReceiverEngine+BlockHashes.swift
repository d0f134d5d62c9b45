import OTAWire

extension ReceiverEngine {
  /// The blocks of the running image at `blockSize` bytes each (the last may be short).
  static func blockCount(imageSize: UInt32, blockSize: UInt32) -> UInt32 {
    UInt32(BlockHashes.blockCount(imageSize: imageSize, blockSize: blockSize))
  }

  /// How many hashes one answer to `asked` holds: the central's max count, the blocks left, what
  /// fits in one notification at the smallest MTU of this connection, and what 4 MiB of the slot
  /// holds (at least one block). So no request makes the device read more than 4 MiB.
  func blockHashCount(_ asked: BlockHashRequest, total: UInt32) -> Int {
    let left = Int(total - asked.firstBlock)
    let fits = BlockHashPage.capacity(mtu: smallestMTU ?? mtu)
    let readable = BlockHashRequest.blocksWithinReadBound(blockSize: asked.blockSize)
    return max(0, min(Int(asked.maxCount), left, fits, readable))
  }

  /// BLOCK HASHES (features bit 2): checked and answered here, the hashing done by the host. Any
  /// state: it reads only the running slot and changes nothing of a transfer.
  mutating func answerBlockHashes(_ asked: BlockHashRequest, _ out: inout [ReceiverAction]) {
    let opcode = Opcode.blockHashes.rawValue
    guard BlockHashRequest.isValidBlockSize(asked.blockSize), asked.maxCount > 0 else {
      out.append(.notify(response(opcode, .invalidParameter)))
      return
    }
    // The running image, or the whole slot when no image is known (a slot written by hand).
    let imageSize = readableRunningSize
    let total = imageSize == 0 ? 0 : Self.blockCount(imageSize: imageSize, blockSize: asked.blockSize)
    guard total > 0 else {
      // No running slot to read: nothing to copy from, said as an empty list.
      let page = BlockHashPage(firstBlock: asked.firstBlock, totalBlocks: 0, hashes: [])
      out.append(.notify(Response(.blockHashes, .success, .blockHashes(page)).encoded))
      return
    }
    guard asked.firstBlock < total else {
      out.append(.notify(response(opcode, .invalidParameter)))
      return
    }
    let count = blockHashCount(asked, total: total)
    guard count > 0 else {
      out.append(.notify(response(opcode, .invalidParameter)))
      return
    }
    perform(
      .hashRunning(
        blockSize: asked.blockSize, firstBlock: asked.firstBlock, count: count, imageSize: imageSize),
      &out)
  }

  /// The host hashed the blocks (or could not read the slot): the answer goes out.
  mutating func completeBlockHashes(_ io: ReceiverIO, _ result: IOResult, _ out: inout [ReceiverAction]) {
    guard case .hashRunning(let blockSize, let first, let count, let imageSize) = io else { return }
    let opcode = Opcode.blockHashes.rawValue
    if case .hashes(let hashes) = result, hashes.count == count {
      let total = Self.blockCount(imageSize: imageSize, blockSize: blockSize)
      let end = min(UInt64(first + UInt32(count)) * UInt64(blockSize), UInt64(imageSize))
      statistics.blockHashAnswers += 1
      statistics.blockHashBytesRead += end - UInt64(first) * UInt64(blockSize)
      let page = BlockHashPage(firstBlock: first, totalBlocks: total, hashes: hashes)
      out.append(.notify(Response(.blockHashes, .success, .blockHashes(page)).encoded))
    } else {
      out.append(.notify(response(opcode, .storageError)))
    }
    // Nothing of the transfer waited on this, but a WINDOW may move now that no IO runs.
    processHeadWindow(&out)
  }
}
