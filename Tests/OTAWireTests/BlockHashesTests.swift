import Testing

@testable import OTAWire

@Suite struct BlockHashesTests {
  @Test func layoutIsBlockSizeCountThenEightBytesPerBlock() throws {
    // [P-HASH-1]
    let value = BlockHashes(blockSize: 512, hashes: [0x0807_0605_0403_0201, 0x1122_3344_5566_7788])
    let bytes = value.encoded
    #expect(Array(bytes[0..<4]) == [0x00, 0x02, 0x00, 0x00])  // block size 512
    #expect(Array(bytes[4..<8]) == [0x02, 0x00, 0x00, 0x00])  // 2 blocks
    #expect(Array(bytes[8..<16]) == [1, 2, 3, 4, 5, 6, 7, 8])  // a digest's first 8 bytes, in order
    #expect(bytes.count == 24)
    #expect(try BlockHashes(bytes: bytes) == value)
    #expect(BlockHashes.truncate([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) == 0x0807_0605_0403_0201)
  }

  @Test func theBlockSizeKeepsTheValueWithinOneAttribute() {
    // [P-HASH-2]
    // 63 blocks of 8 bytes plus the 8-byte header: 512 bytes, ATT's longest value.
    #expect(BlockHashes.maximumBlockCount == 63)
    #expect(BlockHashes.blockSize(forImageSize: 1) == 512)
    #expect(BlockHashes.blockSize(forImageSize: 63 * 512) == 512)
    #expect(BlockHashes.blockSize(forImageSize: 63 * 512 + 1) == 1024)
    #expect(BlockHashes.blockSize(forImageSize: 64 << 20) == 2 << 20)
    for size: UInt32 in [1, 41_686, 1 << 20, 64 << 20, .max] {
      let block = BlockHashes.blockSize(forImageSize: size)
      #expect(BlockHashes.blockCount(imageSize: size, blockSize: block) <= 63, "\(size)")
    }
  }

  @Test func malformedValuesAreRefused() {
    #expect(throws: WireError.self) { try BlockHashes(bytes: [0, 2, 0, 0]) }  // no count
    // A hash cut short.
    #expect(throws: WireError.self) { try BlockHashes(bytes: [0, 2, 0, 0, 1, 0, 0, 0, 1, 2, 3]) }
    #expect(throws: WireError.self) { try BlockHashes(bytes: [0, 2, 0, 0, 0, 0, 0, 0, 9]) }  // trailing
    #expect(throws: WireError.self) {
      try BlockHashes(bytes: [0, 0, 0, 0, 1, 0, 0, 0] + [UInt8](repeating: 0, count: 8))
    }
    let tooMany = [0, 2, 0, 0, 64, 0, 0, 0] + [UInt8](repeating: 0, count: 64 * 8)
    #expect(throws: WireError.self) { try BlockHashes(bytes: tooMany) }
    // A device with no running image answers block size 0, no blocks.
    #expect((try? BlockHashes(bytes: [0, 0, 0, 0, 0, 0, 0, 0]))?.hashes == [])
  }
}
