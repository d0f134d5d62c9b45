import Crypto

/// The SHA-256 of the first bytes of a source, read a piece at a time (a slot holds up to gigabytes):
/// what an SMP client's `sha` names, the whole uploaded file.
public enum SourceDigest {
  public static func sha256<Source: ImageSource>(
    of source: Source, length: UInt64, pieceSize: Int = 1 << 20
  ) throws(Source.ReadError) -> [UInt8] {
    var hasher = SHA256()
    var offset: UInt64 = 0
    while offset < length {
      let count = Int(min(UInt64(max(1, pieceSize)), length - offset))
      hasher.update(data: try source.read(at: offset, count: count))
      offset += UInt64(count)
    }
    return Array(hasher.finalize())
  }
}

/// SHA-256 fed a piece at a time, for a reader that reads the bytes for more than the hash (otad
/// adopt takes a slot's CRC32 in the same pass).
public struct IncrementalSHA256: Sendable {
  private var hasher = SHA256()

  public init() {}

  public mutating func update(_ bytes: [UInt8]) { hasher.update(data: bytes) }

  public func finalize() -> [UInt8] { Array(hasher.finalize()) }
}
