import OTAWire

/// Signs an existing MCUboot image again, with another key or for the first time. imgtool has no
/// such command: its `sign` wraps a raw payload (that is `MCUbootImageBuilder` here).
///
/// Kept byte for byte: the header, its fill, the payload and the protected TLV area, so the digest
/// and anything the protected area pins (version, SEC_CNT) stay what they were.
/// Replaced: the unprotected area's hashes (SHA256/384/512), key TLVs (KEYHASH, PUBKEY) and
/// signatures (every signature TLV and SIG_PURE): the result carries SHA256, the new key's KEYHASH
/// or PUBKEY, and its signature. An image is signed by one key; re-signing is not co-signing.
/// Kept, after the new signature and in their order: every other unprotected TLV (vendor or unknown
/// types). No signature covers them either way, so keeping them gives nothing away.
///
/// Refused: input without the MCUboot magic, malformed images, encrypted payloads (their digest is
/// of the plaintext), images whose existing hash TLV does not match their bytes (signing would
/// vouch for a damaged or altered image), and bytes after the TLV areas.
public enum MCUbootImageSigner {
  public static func sign(
    _ image: [UInt8], with key: ImageSigningKey, publicKeyFormat: PublicKeyFormat = .hash
  ) throws(ImageError) -> [UInt8] {
    guard MCUbootHeader.looksLikeMCUboot(image) else {
      throw .notMCUboot(
        "it does not start with the magic 0x96f3b83d; wrap a raw payload with `otactl image create`")
    }
    let layout: MCUbootImageLayout
    do {
      layout = try MCUbootImageLayout(parsing: image)
    } catch {
      throw .malformed(error.reason)
    }
    if !layout.header.flags.isDisjoint(with: [.encryptedAES128, .encryptedAES256]) { throw .encrypted }
    let trailing = image.count - Int(layout.totalLength)
    guard trailing == 0 else { throw .trailingBytes(trailing) }

    let hashed = image[0..<Int(layout.header.hashedLength)]
    for tlv in layout.unprotectedTLVs {
      guard let computed = ImageHash.digest(of: hashed, for: tlv.type) else { continue }
      guard computed == tlv.value else {
        throw .hashMismatch(type: tlv.type, recorded: tlv.value, computed: computed)
      }
    }
    let kept = layout.unprotectedTLVs.filter { !isReplacedWhenSigning($0.type) }
    let area = try UnprotectedTLVs.seal(
      hashedBytes: hashed, signingKey: key, publicKeyFormat: publicKeyFormat, extra: kept)
    var signed = Array(hashed)
    area.append(to: &signed)
    return signed
  }

  private static func isReplacedWhenSigning(_ type: MCUbootTLVType) -> Bool {
    type.isSignatureRelated || ImageHash.isHash(type)
  }
}
