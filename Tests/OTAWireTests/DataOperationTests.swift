import Testing

@testable import OTAWire

@Suite struct DataOperationTests {
  @Test func eachKindsLayout() throws {
    // [P-OP-1] [P-OP-3] [P-OP-4] [P-OP-5] [P-OP-6]
    // raw: offset 0x100, kind 0, the bytes.
    let raw = DataOperation(offset: 0x100, body: .raw([9, 8, 7]))
    #expect(raw.encoded == [0x00, 0x01, 0x00, 0x00, 0x00, 9, 8, 7])
    // deflate: offset, kind 1, length u32 (the inflated size), the compressed bytes.
    let deflate = DataOperation(offset: 4, body: .deflate(length: 1000, compressed: [0xAA, 0xBB]))
    #expect(deflate.encoded == [4, 0, 0, 0, 0x01, 0xE8, 0x03, 0, 0, 0xAA, 0xBB])
    // copy: offset, kind 2, source u32, length u32, nothing after.
    let copy = DataOperation(offset: 8, body: .copy(source: 0x10, length: 0x20))
    #expect(copy.encoded == [8, 0, 0, 0, 0x02, 0x10, 0, 0, 0, 0x20, 0, 0, 0])
    // patch: offset, kind 3, source u32, length u32, the deflated differences.
    let patch = DataOperation(offset: 0, body: .patch(source: 1, length: 2, differences: [0x03]))
    #expect(patch.encoded == [0, 0, 0, 0, 0x03, 1, 0, 0, 0, 2, 0, 0, 0, 0x03])
    for operation in [raw, deflate, copy, patch] {
      #expect(try DataOperation(bytes: operation.encoded) == operation)
    }
    #expect(raw.length == 3 && deflate.length == 1000 && copy.length == 0x20 && patch.length == 2)
  }

  @Test func aZstdPartsLayout() throws {
    // [P-ZSTD-1]
    // offset 0x1000, kind 4, part u32 (position 0x20, bit 31 on the last part), the frame's bytes.
    let middle = DataOperation(offset: 0x1000, body: .zstdPart(position: 0x20, last: false, bytes: [1, 2]))
    #expect(middle.encoded == [0x00, 0x10, 0, 0, 0x04, 0x20, 0, 0, 0x00, 1, 2])
    let last = DataOperation(offset: 0x1000, body: .zstdPart(position: 0x22, last: true, bytes: [3]))
    #expect(last.encoded == [0x00, 0x10, 0, 0, 0x04, 0x22, 0, 0, 0x80, 3])
    for operation in [middle, last] { #expect(try DataOperation(bytes: operation.encoded) == operation) }
    // A part produces nothing by itself and reads no source; without a payload it is no part.
    #expect(middle.length == 0 && middle.sourceRange == nil)
    #expect(throws: WireError.self) { try DataOperation(bytes: [0, 0, 0, 0, 0x04, 0, 0, 0, 0x80]) }
    #expect(DataOperation.overhead(.zstdPart) == 9)
  }

  @Test func rangesAreComputedWideSoLyingOffsetsCannotWrap() {
    // [P-OP-7]
    let operation = DataOperation(offset: .max, body: .copy(source: .max, length: .max))
    #expect(operation.end == UInt64(UInt32.max) * 2)
    #expect(operation.sourceRange == UInt64(UInt32.max)..<UInt64(UInt32.max) * 2)
  }

  @Test func malformedWritesAreRefused() {
    // [P-OP-8]
    let malformed: [[UInt8]] = [
      [],  // nothing
      [0, 0, 0, 0],  // no kind
      [0, 0, 0, 0, 0x00],  // raw without bytes
      [0, 0, 0, 0, 0x01, 5, 0, 0, 0],  // deflate without a payload
      [0, 0, 0, 0, 0x01, 0, 0, 0, 0, 1],  // deflate of length 0
      [0, 0, 0, 0, 0x02, 0, 0, 0, 0, 1, 0, 0],  // copy with a short length
      [0, 0, 0, 0, 0x02, 0, 0, 0, 0, 1, 0, 0, 0, 9],  // copy with a byte after it
      [0, 0, 0, 0, 0x03, 0, 0, 0, 0, 1, 0, 0, 0],  // patch without differences
      [0, 0, 0, 0, 0x04, 1],  // unknown kind
    ]
    for bytes in malformed {
      #expect(throws: WireError.self, "\(bytes)") { try DataOperation(bytes: bytes) }
    }
  }
}
