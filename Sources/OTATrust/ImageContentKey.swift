import Crypto
import CryptoExtras
import OTAWire

/// The AES key that encrypts an MCUboot image's payload: 16 bytes (IMAGE_F_ENCRYPTED_AES128) or 32
/// (AES256), used as imgtool uses it: AES-CTR with a 128-bit big-endian counter that is 0 at the
/// payload's first byte (the byte after the header) and counts 16-byte blocks from there.
///
/// The mode is seekable: the keystream at any offset is known without the bytes before it, so
/// chunks can be decrypted in any order, again after a resume, or one block at a time in place.
public struct ImageContentKey: Sendable, Equatable {
  public let bytes: [UInt8]

  /// nil unless `bytes` is 16 or 32 bytes long.
  public init?(bytes: [UInt8]) {
    guard bytes.count == 16 || bytes.count == 32 else { return nil }
    self.bytes = bytes
  }

  /// A fresh key from the system's random source: what imgtool draws for each image it encrypts.
  public static func random(bits: Int) -> ImageContentKey? {
    guard bits == 128 || bits == 256 else { return nil }
    return ImageContentKey(
      bytes: SymmetricKey(size: SymmetricKeySize(bitCount: bits)).withUnsafeBytes(Array.init))
  }

  public var bitCount: Int { bytes.count * 8 }

  /// The header flag that says this key's length.
  public var headerFlag: MCUbootHeader.Flags { bytes.count == 32 ? .encryptedAES256 : .encryptedAES128 }

  /// `bytes` XORed with the keystream from payload offset `offset` on: encrypts plaintext and
  /// decrypts ciphertext alike.
  public func crypt(_ bytes: [UInt8], atPayloadOffset offset: UInt64) -> [UInt8] {
    guard !bytes.isEmpty else { return [] }
    let skip = Int(offset % 16)
    var counter = [UInt8](repeating: 0, count: 16)
    var block = offset / 16
    for index in stride(from: 15, through: 8, by: -1) {
      counter[index] = UInt8(truncatingIfNeeded: block)
      block >>= 8
    }
    let input = skip == 0 ? bytes : [UInt8](repeating: 0, count: skip) + bytes
    do {
      let output = try AES._CTR.encrypt(
        input, using: SymmetricKey(data: self.bytes), nonce: try AES._CTR.Nonce(nonceBytes: counter))
      return Array(output.dropFirst(skip))
    } catch {
      // The key's length is checked at init and the counter is always 16 bytes: nothing else throws.
      preconditionFailure("AES-CTR refused a \(self.bytes.count)-byte key: \(error)")
    }
  }
}
