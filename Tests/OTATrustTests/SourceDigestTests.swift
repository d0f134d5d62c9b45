import Crypto
import OTATrust
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
