import OTAWire
import Testing

@testable import OTADeltaPlan

/// `otactl delta`'s file: what it says round-trips, and every way a file can lie is refused
/// before a push uses it.
@Suite struct DeltaPlanFileTests {
  static let segments = [
    DeltaSegment(start: 0, end: 100, source: .copy(base: 7)),
    DeltaSegment(start: 100, end: 130, source: .literal),
    DeltaSegment(start: 130, end: 4000, source: .patch(base: 90)),
  ]
  static let file = DeltaPlanFile(
    baseSize: 5000, baseSHA256: Array(repeating: 0xAB, count: 32), targetSize: 4000,
    targetSHA256: Array(repeating: 0xCD, count: 32), segments: segments)

  @Test func itRoundTripsAndItsLayoutIsTheDocumentedOne() throws {
    let bytes = Self.file.encoded
    #expect(try DeltaPlanFile(bytes: bytes) == Self.file)
    // Magic, version, base size and hash, target size and hash, count, then 9 + 5 + 9 bytes, then
    // the frame count (none).
    #expect(Array(bytes.prefix(15)) == Array("BLUEOTA-DELTA\n".utf8) + [2])
    #expect(bytes.count == 15 + 36 + 36 + 4 + 9 + 5 + 9 + 4)
    #expect(Array(bytes.suffix(4)) == [0, 0, 0, 0])
    #expect(Array(bytes[87..<91]) == [3, 0, 0, 0])
    #expect(Array(bytes[91..<100]) == [1, 100, 0, 0, 0, 7, 0, 0, 0])
  }

  /// Version 2 holds the target as zstd frames too: each `target length u32, size u32, bytes`.
  @Test func framesRoundTripAndAVersionOneFileIsStillRead() throws {
    var file = Self.file
    file.frames = [
      DeltaFrame(start: 0, length: 3000, bytes: [1, 2, 3]), DeltaFrame(start: 3000, length: 1000, bytes: [4]),
    ]
    let bytes = file.encoded
    #expect(try DeltaPlanFile(bytes: bytes) == file)
    #expect(
      Array(bytes.suffix(4 + 11 + 9)) == [2, 0, 0, 0] + [0xB8, 0x0B, 0, 0, 3, 0, 0, 0, 1, 2, 3] + [
        0xE8, 3, 0, 0, 1, 0, 0, 0, 4,
      ])
    // Version 1 (before frames): no frame count after the segments.
    var first = Array(Self.file.encoded.dropLast(4))
    first[14] = 1
    #expect(try DeltaPlanFile(bytes: first) == Self.file)
    // Frames that do not cover the target, and a frame of size 0, are lies.
    var short = file
    short.frames.removeLast()
    var empty = file
    empty.frames[1].bytes = []
    let lies: [(DeltaPlanFile, DeltaPlanFile.DecodeError)] = [
      (short, .badFrame(index: 1, reason: "the frames cover 3000 of 4000 bytes")),
      (empty, .badFrame(index: 1, reason: "a length or size of 0")),
    ]
    for (lie, error) in lies {
      #expect(throws: error) { try DeltaPlanFile(bytes: lie.encoded) }
    }
    #expect(throws: DeltaPlanFile.DecodeError.truncated) { try DeltaPlanFile(bytes: Array(bytes.dropLast())) }
  }

  @Test func everyLieIsRefused() {
    let bytes = Self.file.encoded
    var wrongVersion = bytes
    wrongVersion[14] = 3
    var zeroLength = bytes
    zeroLength[92] = 0
    var unknownKind = bytes
    unknownKind[91] = 9
    var hugeCount = bytes
    hugeCount[90] = 0xFF
    var pastTheTarget = bytes
    pastTheTarget[92] = 0xA1  // the first segment now runs to 4001.
    pastTheTarget[93] = 0x0F
    let cases: [([UInt8], DeltaPlanFile.DecodeError)] = [
      (Array("not a plan".utf8), .notADeltaPlan),
      (wrongVersion, .unsupportedVersion(3)),
      (Array(bytes.dropLast()), .truncated),
      (bytes + [0], .trailingBytes(1)),
      (zeroLength, .badSegment(index: 0, reason: "a length of 0")),
      (unknownKind, .badSegment(index: 0, reason: "kind 9")),
      (hugeCount, .truncated),
      (pastTheTarget, .badSegment(index: 0, reason: "past the target's 4000 bytes")),
    ]
    for (bytes, expected) in cases {
      #expect(throws: expected) { try DeltaPlanFile(bytes: bytes) }
    }
    // Segments that stop short of the target.
    var short = Self.file
    short.targetSize = 4001
    #expect(
      throws: DeltaPlanFile.DecodeError.badSegment(index: 3, reason: "the segments cover 4000 of 4001 bytes")
    ) {
      try DeltaPlanFile(bytes: short.encoded)
    }
  }
}
