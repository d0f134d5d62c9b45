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
  public let totalBlocks: UInt32
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
    hashes = Array(repeating: nil, count: Int(totalBlocks))
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
    guard response.status == .success else { throw .refused(response.status) }
    guard case .blockHashes(let page) = response.payload else { throw .unexpected("no page") }
    guard page.totalBlocks == totalBlocks else {
      throw .unexpected("\(page.totalBlocks) blocks, expected \(totalBlocks)")
    }
    guard page.firstBlock == asked.firstBlock, !page.hashes.isEmpty, page.hashes.count <= Int(asked.maxCount)
    else {
      throw .unexpected(
        "blocks \(page.firstBlock)+\(page.hashes.count) for \(asked.firstBlock)+\(asked.maxCount)")
    }
    for (index, hash) in page.hashes.enumerated() { hashes[Int(page.firstBlock) + index] = hash }
    let short = Int(asked.maxCount) - page.hashes.count
    if short > 0 {
      followUps.append(
        BlockHashRequest(
          blockSize: blockSize, firstBlock: page.firstBlock + UInt32(page.hashes.count),
          maxCount: UInt8(short)))
    }
  }

  /// Every block's hash, once all are in.
  public var complete: BlockHashes? {
    guard outstanding.isEmpty, followUps.isEmpty, nextBlock >= totalBlocks else { return nil }
    let all = hashes.compactMap { $0 }
    guard all.count == hashes.count else { return nil }
    return BlockHashes(blockSize: blockSize, hashes: all)
  }
}
