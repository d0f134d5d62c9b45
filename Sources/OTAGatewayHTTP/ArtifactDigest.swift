import Crypto
import OTAGateway
import OTASystem
import OTAWire

/// An artifact's hash computed as its bytes go by: while a download is written to disk, and over a
/// file already there in pieces, so that no artifact is ever held whole in memory to be checked.
struct ArtifactDigest {
  private var sha256: SHA256?
  private var sha1: Insecure.SHA1?

  init(_ algorithm: ArtifactReference.Algorithm) {
    switch algorithm {
    case .sha256: sha256 = SHA256()
    case .sha1: sha1 = Insecure.SHA1()
    }
  }

  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    sha256?.update(bufferPointer: bytes)
    sha1?.update(bufferPointer: bytes)
  }

  mutating func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update($0) }
  }

  /// Lowercase hexadecimal.
  func finalize() -> String {
    if let sha256 { return Hex.string(sha256.finalize()) }
    if let sha1 { return Hex.string(sha1.finalize()) }
    return ""
  }

  /// How much of a file is read at a time when it is hashed from disk.
  static let piece = 1 << 20

  /// Folds the first `count` bytes of `file` in, a piece at a time.
  mutating func update(from file: FileDescriptor, count: Int) throws(SystemError) {
    var offset = 0
    while offset < count {
      let bytes = try file.read(at: UInt64(offset), count: min(Self.piece, count - offset))
      if bytes.isEmpty { break }
      update(bytes)
      offset += bytes.count
    }
  }
}
