import Crypto
import OTAWire

/// The unprotected TLV area that seals an image, laid out as imgtool writes it: SHA256 of the
/// hashed range (header, payload, protected TLVs), then, when a key signs, KEYHASH (or PUBKEY) and
/// the signature of that digest. Shared by the builder and the signer so both seal alike.
enum UnprotectedTLVs {
  /// - Parameters:
  ///   - hashedBytes: the image from its first byte to the end of the protected TLV area.
  ///   - extra: TLVs kept after the signature (the signer's other unprotected TLVs).
  static func seal(
    hashedBytes: ArraySlice<UInt8>, signingKey: ImageSigningKey?, publicKeyFormat: PublicKeyFormat,
    extra: [MCUbootTLV] = []
  ) throws(ImageError) -> MCUbootTLVArea {
    let digest = SHA256.hash(data: hashedBytes)
    var entries = [MCUbootTLV(type: .sha256, value: Array(digest))]
    if let signingKey {
      let publicKey = signingKey.publicKey
      let keyTLV =
        switch publicKeyFormat {
        case .hash: MCUbootTLV(type: .keyHash, value: publicKey.keyHash)
        case .full: MCUbootTLV(type: .publicKey, value: publicKey.der)
        }
      entries.append(keyTLV)
      do {
        entries.append(
          MCUbootTLV(type: signingKey.algorithm.signatureTLV, value: try signingKey.sign(digest: digest)))
      } catch {
        throw .key(error)
      }
    }
    do {
      return try MCUbootTLVArea(kind: .unprotected, entries: entries + extra)
    } catch {
      throw .malformed(error.reason)
    }
  }
}
