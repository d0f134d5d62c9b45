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
    // Magic, version, base size and hash, target size and hash, count, then 9 + 5 + 9 bytes.
    #expect(Array(bytes.prefix(15)) == Array("BLUEOTA-DELTA\n".utf8) + [1])
    #expect(bytes.count == 15 + 36 + 36 + 4 + 9 + 5 + 9)
    #expect(Array(bytes[87..<91]) == [3, 0, 0, 0])
    #expect(Array(bytes[91..<100]) == [1, 100, 0, 0, 0, 7, 0, 0, 0])
  }

  @Test func everyLieIsRefused() {
    let bytes = Self.file.encoded
    var wrongVersion = bytes
    wrongVersion[14] = 2
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
      (wrongVersion, .unsupportedVersion(2)),
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
