import OTAWire

/// The central's read of the running image's block hashes page by page (BLOCK HASHES, Info
/// features bit 2), as a value: which requests go out next, which are answered, and the hashes
/// collected. Requests are pipelined up to `depth` deep; the device answers them in order.
public struct BlockHashPaging: Equatable, Sendable {
  /// Requests outstanding at once: enough to keep the device busy through a round trip, few
  /// enough that an abandoned read leaves little to skip.
  public static let depth = 4
  /// The most pages a read may take: the block size grows until the image fits in these.
  public static let maximumPages: UInt64 = 256
  public static let smallestBlockSize: UInt32 = 4096

  public let blockSize: UInt32
  /// The blocks to read: all of the running image's, or (its size unknown) those that cover the
  /// guess, fewer when the slot is smaller.
  public private(set) var totalBlocks: UInt32
  /// The device's block count, as its answers give it: known in advance when the running image's
  /// size is, learnt from the first answer when not (the device then hashes its whole slot).
  public private(set) var deviceBlocks: UInt32?
  /// The running image's size was unknown: the device's last block may be short, of a length the
  /// central cannot know.
  public private(set) var unknownSize = false
  /// Hashes asked for per request.
  public let perPage: Int
  /// Per block, its hash once answered.
  private(set) var hashes: [UInt64?]
  /// The next block no request has asked for yet.
  private var nextBlock: UInt32 = 0
  /// Parts of pages answered short (the device's MTU was smaller): asked again before new pages.
  private var followUps: [BlockHashRequest] = []
  /// Requests sent and not yet answered, oldest first.
  private(set) var outstanding: [BlockHashRequest] = []
  /// Requests sent, for the report.
  public private(set) var requestsSent = 0

  /// Why paging stopped short: the caller plans without block hashes.
  public enum Failure: Error, Equatable, Sendable {
    case refused(StatusCode)
    case unexpected(String)
  }

  /// Paging for an image of `imageSize` bytes at `mtu`; nil when there is nothing to read.
  public init?(imageSize: UInt32, mtu: ATTMTU) {
    let fits = BlockHashPage.capacity(mtu: mtu)
    guard imageSize > 0, fits > 0 else { return nil }
    blockSize = Self.blockSize(imageSize: imageSize, perPage: fits)
    totalBlocks = UInt32(BlockHashes.blockCount(imageSize: imageSize, blockSize: blockSize))
    perPage = min(fits, BlockHashRequest.blocksWithinReadBound(blockSize: blockSize), Int(UInt8.max))
    deviceBlocks = totalBlocks
    hashes = Array(repeating: nil, count: Int(totalBlocks))
  }

  /// Paging a running slot whose image size the device does not know (a slot written by hand that
  /// nobody adopted): the device hashes the whole slot, and the central reads the blocks that cover
  /// `guess` bytes (the new image's size: a release of the same partition) at the block size that
  /// size would get. Nil when there is nothing to read.
  public init?(unknownImageOfAbout guess: UInt32, mtu: ATTMTU) {
    guard var paging = Self(imageSize: guess, mtu: mtu) else { return nil }
    paging.deviceBlocks = nil
    paging.unknownSize = true
    self = paging
  }

  /// The smallest power of two, at least 4 KiB, whose blocks fit in 256 pages of `perPage` hashes
  /// (4 MiB at most: the device's bound).
  public static func blockSize(imageSize: UInt32, perPage: Int) -> UInt32 {
    var block = UInt64(smallestBlockSize)
    let perPage = UInt64(max(1, perPage))
    while block < UInt64(BlockHashRequest.largestBlockSize) {
      let blocks = (UInt64(imageSize) + block - 1) / block
      if (blocks + perPage - 1) / perPage <= maximumPages { break }
      block *= 2
    }
    return UInt32(block)
  }

  /// The requests to send now: as many as keep `depth` outstanding.
  public mutating func nextRequests() -> [Request] {
    var requests: [Request] = []
    while outstanding.count < Self.depth, let request = takeNext() {
      outstanding.append(request)
      requestsSent += 1
      requests.append(.blockHashes(request))
    }
    return requests
  }

  private mutating func takeNext() -> BlockHashRequest? {
    if !followUps.isEmpty { return followUps.removeFirst() }
    guard nextBlock < totalBlocks else { return nil }
    let count = min(UInt32(perPage), totalBlocks - nextBlock)
    defer { nextBlock += count }
    return BlockHashRequest(blockSize: blockSize, firstBlock: nextBlock, maxCount: UInt8(count))
  }

  /// The answer to the oldest outstanding request. A short page asks again for the rest.
  public mutating func receive(_ response: Response) throws(Failure) {
    guard let asked = outstanding.first else { throw .unexpected("an answer nobody asked for") }
    outstanding.removeFirst()
    // A slot smaller than the guess: the requests past its end, sent before the first answer told
    // its size, are refused as they should be, and skipped.
    if unknownSize, let deviceBlocks, asked.firstBlock >= deviceBlocks, response.status == .invalidParameter {
      return
    }
    guard response.status == .success else { throw .refused(response.status) }
    guard case .blockHashes(let page) = response.payload else { throw .unexpected("no page") }
    if unknownSize, deviceBlocks == nil {
      guard page.totalBlocks > 0 else { throw .unexpected("no blocks in the running slot") }
      learnDeviceBlocks(page.totalBlocks)
    }
    guard page.totalBlocks == deviceBlocks else {
      throw .unexpected("\(page.totalBlocks) blocks, expected \(deviceBlocks ?? 0)")
    }
    guard page.firstBlock == asked.firstBlock, !page.hashes.isEmpty, page.hashes.count <= Int(asked.maxCount)
    else {
      throw .unexpected(
        "blocks \(page.firstBlock)+\(page.hashes.count) for \(asked.firstBlock)+\(asked.maxCount)")
    }
    guard Int(page.firstBlock) + page.hashes.count <= hashes.count else {
      throw .unexpected("blocks \(page.firstBlock)+\(page.hashes.count) past the \(hashes.count) read")
    }
    for (index, hash) in page.hashes.enumerated() { hashes[Int(page.firstBlock) + index] = hash }
    // Short of what was asked within the blocks to read (not past the slot's end, learnt late).
    let wanted = min(Int(asked.maxCount), Int(totalBlocks) - Int(page.firstBlock))
    let short = wanted - page.hashes.count
    if short > 0 {
      followUps.append(
        BlockHashRequest(
          blockSize: blockSize, firstBlock: page.firstBlock + UInt32(page.hashes.count),
          maxCount: UInt8(short)))
    }
  }

  /// Every block's hash, once all are in. With the image's size unknown, the slot's last block
  /// is left out when it was read (its length is not known, so no block could match it): every
  /// block returned is a whole `blockSize`.
  public var complete: BlockHashes? {
    guard outstanding.isEmpty, followUps.isEmpty, nextBlock >= totalBlocks else { return nil }
    var all = hashes.compactMap { $0 }
    guard all.count == hashes.count else { return nil }
    if unknownSize, totalBlocks == deviceBlocks { all.removeLast() }
    return BlockHashes(blockSize: blockSize, hashes: all)
  }

  /// The slot's block count from the first answer: fewer blocks to read when it is smaller than the guess.
  private mutating func learnDeviceBlocks(_ blocks: UInt32) {
    deviceBlocks = blocks
    if blocks < totalBlocks {
      totalBlocks = blocks
      hashes.removeLast(hashes.count - Int(blocks))
      nextBlock = min(nextBlock, blocks)
      followUps.removeAll { $0.firstBlock >= blocks }
    }
  }
}
