import Crypto
import OTATrust
import OTAWire
import Testing

/// The SHA-256 of a source read piece by piece is the one-shot SHA-256 of the same bytes, whatever
/// the piece size, and reads only the first `length` bytes.
@Suite struct SourceDigestTests {
  struct Bytes: ImageSource {
    let bytes: [UInt8]
    var capacity: UInt64 { UInt64(bytes.count) }
    func read(at offset: UInt64, count: Int) -> [UInt8] { Array(bytes[Int(offset)..<Int(offset) + count]) }
  }

  @Test(arguments: [1, 7, 4096, 1 << 20])
  func piecesHashAsOneWhole(pieceSize: Int) {
    let bytes = (0..<10_001).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    let source = Bytes(bytes: bytes + [0xFF, 0xFF])
    #expect(
      SourceDigest.sha256(of: source, length: UInt64(bytes.count), pieceSize: pieceSize)
        == Array(SHA256.hash(data: bytes)))
    #expect(SourceDigest.sha256(of: source, length: 0) == Array(SHA256.hash(data: [UInt8]())))
  }
}

/// Fed a piece at a time, the SHA-256 of the whole: FIPS 180-2's "abc", and pieces of any cut.
@Suite struct IncrementalSHA256Tests {
  @Test func abcIsFIPSsExample() {
    var hasher = IncrementalSHA256()
    hasher.update(Array("a".utf8))
    hasher.update(Array("bc".utf8))
    #expect(
      Hex.string(hasher.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  }

  @Test(arguments: [1, 1000, 1 << 14])
  func piecesHashAsOneWhole(pieceSize: Int) {
    let bytes = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 3) }
    var hasher = IncrementalSHA256()
    for start in stride(from: 0, to: bytes.count, by: pieceSize) {
      hasher.update(Array(bytes[start..<min(start + pieceSize, bytes.count)]))
    }
    #expect(hasher.finalize() == Array(SHA256.hash(data: bytes)))
  }
}
