import Testing

@testable import OTAWire

/// BLOCK HASHES (opcode 0x09, features bit 2): the request's 9 bytes and the answer's page.
@Suite struct BlockHashRequestTests {
  @Test func theRequestIsNineBytesAfterTheOpcode() throws {
    // [P-BH-1]
    let bytes: [UInt8] = [
      0x09,  // BLOCK HASHES
      0x00, 0x10, 0x00, 0x00,  // block size 4096
      0x2A, 0x00, 0x00, 0x00,  // first block 42
      0x1D,  // max count 29
    ]
    let request = try Request(bytes: bytes)
    #expect(request == .blockHashes(BlockHashRequest(blockSize: 4096, firstBlock: 42, maxCount: 29)))
    #expect(request.encoded == bytes)
    #expect(Opcode.blockHashes.description == "BLOCK HASHES")
  }

  @Test func aRequestOfAnyOtherLengthIsRefused() {
    let whole: [UInt8] = [0x09, 0x00, 0x10, 0x00, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x1D]
    for length in 1..<whole.count {
      #expect(throws: WireError.self) { try Request(bytes: whole.prefix(length)) }
    }
    #expect(throws: WireError.self) { try Request(bytes: whole + [0]) }
    // A wrong length maps to 0x02 invalid length, as for every request.
    do {
      _ = try Request(bytes: whole.dropLast())
    } catch {
      #expect(error.status == .invalidLength)
    }
  }

  @Test func blockSizesArePowersOfTwoFrom512To4MiB() {
    // [P-BH-4]
    for shift in 9...22 { #expect(BlockHashRequest.isValidBlockSize(1 << shift), "2^\(shift)") }
    for size: UInt32 in [0, 1, 256, 511, 513, 3000, 4097, 8 << 20, 1 << 31, UInt32.max] {
      #expect(!BlockHashRequest.isValidBlockSize(size), "\(size)")
    }
  }

  @Test func anAnswerAtMostReadsFourMiB() {
    #expect(BlockHashRequest.blocksWithinReadBound(blockSize: 4096) == 1024)
    #expect(BlockHashRequest.blocksWithinReadBound(blockSize: 1 << 19) == 8)
    #expect(BlockHashRequest.blocksWithinReadBound(blockSize: 4 << 20) == 1)
  }

  @Test func thePageRoundTrips() throws {
    // [P-RESP-6]
    let bytes: [UInt8] =
      [0x60, 0x09, 0x00]  // answer to BLOCK HASHES, success
      + [0x02, 0x00, 0x00, 0x00]  // first block 2
      + [0x05, 0x00, 0x00, 0x00]  // total blocks 5
      + [0x01, 0, 0, 0, 0, 0, 0, 0x80]  // block 2's hash
      + [0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0xAA, 0x99, 0x88]  // block 3's
    let response = try Response(bytes: bytes)
    let page = BlockHashPage(
      firstBlock: 2, totalBlocks: 5, hashes: [0x8000_0000_0000_0001, 0x8899_AABB_CCDD_EEFF])
    #expect(response == Response(.blockHashes, .success, .blockHashes(page)))
    #expect(response.encoded == bytes)
  }

  @Test func anEmptyPageSaysNoRunningImage() throws {
    let bytes: [UInt8] = [0x60, 0x09, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
    let page = BlockHashPage(firstBlock: 7, totalBlocks: 0, hashes: [])
    #expect(try Response(bytes: bytes) == Response(.blockHashes, .success, .blockHashes(page)))
  }

  @Test func errorAnswersCarryNoPage() throws {
    #expect(try Response(bytes: [0x60, 0x09, 0x04]) == Response(.blockHashes, .invalidParameter))
    #expect(try Response(bytes: [0x60, 0x09, 0x0B]) == Response(.blockHashes, .storageError))
  }

  @Test func truncatedOrLyingPagesAreRefused() {
    let good: [UInt8] = [0x60, 0x09, 0x00, 0, 0, 0, 0, 2, 0, 0, 0] + [UInt8](repeating: 1, count: 16)
    #expect(throws: Never.self) { try Response(bytes: good) }
    // Cut anywhere inside the fields, or inside a hash.
    for length in 3..<11 { #expect(throws: WireError.self) { try Response(bytes: good.prefix(length)) } }
    #expect(throws: WireError.self) { try Response(bytes: good.dropLast(3)) }
    // More hashes than blocks from the first one: a lying total.
    var lying = good
    lying[7] = 1
    #expect(throws: WireError.self) { try Response(bytes: lying) }
    // A first block past the total with a hash.
    var past = good
    past[3] = 2
    #expect(throws: WireError.self) { try Response(bytes: past) }
  }

  /// "(min(MTU − 3, 512) − 11) / 8": 1 at the minimum MTU 23, 29 at 247, 62 at most.
  @Test func aPageHoldsWhatOneNotificationHolds() {
    // [P-BH-3]
    #expect(BlockHashPage.capacity(mtu: 23) == 1)
    #expect(BlockHashPage.capacity(mtu: 185) == 21)
    #expect(BlockHashPage.capacity(mtu: 247) == 29)
    #expect(BlockHashPage.capacity(mtu: 517) == 62)
    #expect(BlockHashPage.capacity(mtu: 1000) == 62)
    for mtu: ATTMTU in [23, 100, 247, 517] {
      let page = BlockHashPage(
        firstBlock: 0, totalBlocks: 100, hashes: Array(repeating: 1, count: BlockHashPage.capacity(mtu: mtu)))
      #expect(
        Response(.blockHashes, .success, .blockHashes(page)).encoded.count <= min(mtu.maxNotifyValue, 512))
    }
  }

  @Test func bitTwoIsAnnouncedButNeverOptedIn() {
    // [P-BH-9]
    #expect(Features.blockHashRequests.rawValue == 4)
    #expect(Features.all.contains(.blockHashRequests))
    #expect(!Features.optIn.contains(.blockHashRequests))
  }
}
