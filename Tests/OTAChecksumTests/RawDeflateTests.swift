import Testing

@testable import OTAChecksum

@Suite struct RawDeflateTests {
  static let text = Array(
    String(repeating: "the window, the journal and the resume stay as they are. ", count: 40).utf8)

  @Test func compressedBytesInflateBackToExactlyTheirLength() throws {
    // [P-DEFL-5]
    let compressed = RawDeflate.compress(Self.text)
    #expect(compressed.count < Self.text.count / 10)
    #expect(try RawDeflate.inflate(compressed, length: Self.text.count) == Self.text)
    // Raw deflate: no zlib header (0x78 …), a final stored or compressed block straight away.
    #expect(compressed.first != 0x78)
  }

  @Test func aStreamThatProducesMoreOrFewerBytesThanClaimedIsRefused() {
    // [P-DEFL-2] [P-DEFL-3]
    let compressed = RawDeflate.compress(Self.text)
    #expect(throws: InflateError.tooLong(expected: Self.text.count - 1)) {
      try RawDeflate.inflate(compressed, length: Self.text.count - 1)
    }
    #expect(throws: InflateError.tooShort(produced: Self.text.count, expected: Self.text.count + 1)) {
      try RawDeflate.inflate(compressed, length: Self.text.count + 1)
    }
    // Bytes after the stream's end are refused too: the payload is the stream, nothing more.
    #expect(throws: InflateError.tooLong(expected: Self.text.count)) {
      try RawDeflate.inflate(compressed + [0], length: Self.text.count)
    }
  }

  @Test func truncatedOrInvalidStreamsAreErrorsNotCrashes() {
    // [P-DEFL-1] [P-DEFL-3]
    let compressed = RawDeflate.compress(Self.text)
    for cut in [1, compressed.count / 2, compressed.count - 1] {
      #expect(throws: InflateError.self) {
        try RawDeflate.inflate(compressed.prefix(cut), length: Self.text.count)
      }
    }
    #expect(throws: InflateError.self) { try RawDeflate.inflate([0x07], length: 10) }  // reserved block type
    #expect(throws: InflateError.self) { try RawDeflate.inflate([], length: 10) }
  }

  /// A bomb: a few hundred bytes that would inflate to 10 MB. The bound stops it at the claim.
  @Test func inflationIsBoundedByTheClaimedLength() {
    let bomb = RawDeflate.compress([UInt8](repeating: 0, count: 10_000_000), level: 9)
    #expect(bomb.count < 20_000)
    var produced = 0
    #expect(throws: InflateError.tooLong(expected: 4096)) {
      try RawDeflate.inflate(bomb, length: 4096) { _, piece in produced += piece.count }
    }
    #expect(produced <= 4096)
  }

  @Test func piecesArriveInOrderWithTheirOffsets() throws {
    var joined: [UInt8] = []
    try RawDeflate.inflate(RawDeflate.compress(Self.text), length: Self.text.count, pieceSize: 100) {
      offset, piece in
      #expect(offset == joined.count && piece.count <= 100)
      joined += piece
    }
    #expect(joined == Self.text)
  }
}
