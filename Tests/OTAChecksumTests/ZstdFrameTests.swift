import Testing

@testable import OTAChecksum

/// zstd frames against a prefix: what the encoder makes decodes against the same prefix, its header
/// states its content size, and every frame that is not exactly one whole frame of a stated size
/// within the limit is refused.
@Suite struct ZstdFrameTests {
  static let base: [UInt8] = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }

  static func target() -> [UInt8] {
    var target = Array(base[5_000..<15_000]) + Array(base[0..<5_000])
    target[100] ^= 1
    return target
  }

  @Test func aFrameDecodesAgainstItsPrefixAndReachesIntoIt() throws {
    let target = Self.target()
    let encoder = try #require(ZstdFrameEncoder(base: Self.base, level: 19, frameLength: target.count))
    let frame = try #require(encoder.frame(target[...]))
    #expect(frame.count < 200, "\(frame.count): matches into the base, not literals")
    #expect(ZstdFrame.contentSize(frame) == UInt64(target.count))
    let decoded = try Self.base.withUnsafeBytes { try ZstdFrame.decode(frame, prefix: $0, maxLength: 15_000) }
    #expect(decoded == target)
    // The same encoder codes the next frame on its own.
    let second = try #require(encoder.frame(Self.base[0..<1000]))
    #expect(
      try Self.base.withUnsafeBytes { try ZstdFrame.decode(second, prefix: $0, maxLength: 1000) }
        == Array(Self.base[0..<1000]))
  }

  @Test func whatIsNotOneWholeFrameWithinTheLimitIsRefused() throws {
    let target = Self.target()
    let encoder = try #require(ZstdFrameEncoder(base: Self.base, level: 3, frameLength: target.count))
    let frame = try #require(encoder.frame(target[...]))
    var corrupt = frame
    corrupt[corrupt.count - 3] ^= 0xFF
    let cases: [([UInt8], Int)] = [
      (frame + [0], 15_000),  // a byte after it
      (frame + frame, 30_000),  // two frames
      (Array(frame.dropLast()), 15_000),  // cut
      (frame, 14_999),  // more than the limit
      ([0x50, 0x2A, 0x4D, 0x18, 1, 0, 0, 0, 9], 15_000),  // a skippable frame
      ([1, 2, 3, 4], 15_000),  // no frame at all
    ]
    for (bytes, limit) in cases {
      #expect(throws: ZstdFrameError.self) {
        try Self.base.withUnsafeBytes { try ZstdFrame.decode(bytes, prefix: $0, maxLength: limit) }
      }
    }
    // A corrupted frame fails or decodes to other bytes (no checksum: the WINDOW CRC catches it).
    let decoded = try? Self.base.withUnsafeBytes {
      try ZstdFrame.decode(corrupt, prefix: $0, maxLength: 15_000)
    }
    #expect(decoded != target)
  }
}
