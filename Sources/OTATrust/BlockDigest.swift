import Crypto
import OTAWire

/// The block hashes of the running-slot characteristic: SHA-256 of each block, truncated to the
/// 8 bytes `BlockHashes` carries. Device and central compute them the same way.
public enum BlockDigest {
  public static func truncatedSHA256(_ bytes: some Collection<UInt8>) -> UInt64 {
    BlockHashes.truncate(Array(SHA256.hash(data: Array(bytes))))
  }

  /// `image` cut into blocks of `blockSize` bytes (the last one short), each hashed.
  public static func hashes(of image: [UInt8], blockSize: UInt32) -> BlockHashes {
    let size = Int(blockSize)
    let hashes = stride(from: 0, to: image.count, by: max(1, size)).map { start in
      truncatedSHA256(image[start..<min(start + size, image.count)])
    }
    return BlockHashes(blockSize: blockSize, hashes: hashes)
  }
}
