import OTAWire

/// The signature schemes an image may be signed with here, as MCUboot and imgtool define them:
/// both sign the SHA-256 digest of the image's hashed range (header, payload, protected TLVs).
public enum SigningAlgorithm: String, Sendable, CaseIterable, CustomStringConvertible {
  /// EdDSA over Curve25519 of the 32-byte digest (imgtool `-t ed25519`, TLV ED25519).
  case ed25519
  /// ECDSA over NIST P-256 with the digest as the message hash (imgtool `-t ecdsa-p256`,
  /// TLV ECDSA_SIG, DER-encoded).
  case ecdsaP256 = "ecdsa-p256"

  /// The TLV that carries a signature of this kind.
  public var signatureTLV: MCUbootTLVType {
    switch self {
    case .ed25519: .ed25519
    case .ecdsaP256: .ecdsaSignature
    }
  }

  public var description: String { rawValue }
}
