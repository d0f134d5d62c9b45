import OTAWire

/// How an image's payload lies in its slot, for the checks that read it.
public enum PayloadView: Sendable, Equatable {
  /// As it will run: an encrypted image's payload is plaintext (decrypted in place, or installed
  /// so), as MCUboot's primary slot holds it. No key is needed to check it.
  case asStored
  /// As it arrived: an encrypted image's payload is the sender's ciphertext from slot offset
  /// `plaintextBelow` on (before it, already decrypted in place; 0: none yet). `key` unwraps its
  /// AES key; nil when this device has none, and then an encrypted image is refused.
  case asSent(key: ImageDecryptionKey?, plaintextBelow: UInt64)

}

/// An encrypted payload's two views during one pass: the bytes as sent (ciphertext, what the
/// sender's CRC32 covers) and the plaintext (what MCUboot's SHA-256 covers), whichever of them the
/// slot holds at each offset.
public struct PayloadCipher: Sendable {
  let key: ImageContentKey
  /// The payload's range in the slot: the header's `hdr_size ..< hdr_size + img_size`.
  public let payload: Range<UInt64>
  /// Slot offsets below this (within `payload`) hold plaintext, from it on ciphertext.
  public let plaintextBelow: UInt64

  /// `bytes` of the payload starting at slot offset `offset` (within `payload`), decrypted if they
  /// were ciphertext, encrypted if they were plaintext.
  public func crypt(_ bytes: [UInt8], atSlotOffset offset: UInt64) -> [UInt8] {
    key.crypt(bytes, atPayloadOffset: offset - payload.lowerBound)
  }

  /// `chunk` (read at slot offset `offset`) as sent and as plaintext.
  func views(of chunk: [UInt8], at offset: UInt64) -> (sent: [UInt8], plain: [UInt8]) {
    var sent = chunk
    var plain = chunk
    let end = offset + UInt64(chunk.count)
    let boundary = min(max(plaintextBelow, payload.lowerBound), payload.upperBound)
    // Plaintext in the slot: encrypt it to see it as sent.
    transform(&sent, chunkAt: offset, chunkEnd: end, range: payload.lowerBound..<boundary)
    // Ciphertext in the slot: decrypt it to see the plaintext.
    transform(&plain, chunkAt: offset, chunkEnd: end, range: boundary..<payload.upperBound)
    return (sent, plain)
  }

  private func transform(
    _ bytes: inout [UInt8], chunkAt offset: UInt64, chunkEnd: UInt64, range: Range<UInt64>
  ) {
    let lower = max(range.lowerBound, offset)
    let upper = min(range.upperBound, chunkEnd)
    guard lower < upper else { return }
    let local = Int(lower - offset)..<Int(upper - offset)
    bytes.replaceSubrange(
      local, with: key.crypt(Array(bytes[local]), atPayloadOffset: lower - payload.lowerBound))
  }
}
