import Crypto
import OTAWire

/// Whether an MCUboot image is signed by a trusted key, decided the way MCUboot's
/// `bootutil_img_validate` does: walk the unprotected TLVs; a KEYHASH (or a whole PUBKEY) names the
/// key that the signature TLV after it was made with; the first signature that verifies with a
/// trusted key of its kind makes the image authentic. Everything else is refused, with the most
/// telling reason found.
public enum ImageSignatureCheck {
  public enum Verdict: Sendable, Equatable {
    /// A signature by this trusted key verifies over the image's digest.
    case verified(ImagePublicKey)
    /// No trusted signature; the text says why (it follows "signature invalid: ").
    case rejected(String)
  }

  /// - Parameters:
  ///   - layout: the decoded image; its SHA256 TLV must already have been checked against `digest`.
  ///   - digest: SHA-256 of the image's hashed range.
  ///   - trusted: the keys the device accepts. Empty: every image is refused.
  public static func check(_ layout: MCUbootImageLayout, digest: SHA256Digest, trusted: [ImagePublicKey])
    -> Verdict
  {
    if let misplaced = layout.protectedTLVs.first(where: \.type.isSignatureRelated) {
      return .rejected(
        "\(misplaced.type) sits in the protected TLV area; key and signature TLVs belong after it")
    }
    if layout.unprotectedTLVs.contains(where: { $0.type == .signaturePure }) {
      return .rejected(
        "the image has a pure signature (SIG_PURE), which is not supported; sign its SHA-256 digest "
          + "(imgtool without --pure)")
    }
    var named: Named = .nothing
    var reasons: [Reason] = []
    for tlv in layout.unprotectedTLVs {
      switch tlv.type {
      case .keyHash:
        named =
          if let key = trusted.first(where: { $0.keyHash == tlv.value }) {
            .key(key)
          } else {
            .untrusted(tlv.value.count == SHA256.byteCount ? Hex.string(tlv.value.prefix(8)) : "malformed")
          }
      case .publicKey:
        named =
          if let key = trusted.first(where: { $0.der == tlv.value }) {
            .key(key)
          } else {
            .untrusted((try? ImagePublicKey(der: tlv.value))?.shortID ?? "malformed")
          }
      case .ed25519, .ecdsaSignature:
        defer { named = .nothing }
        switch named {
        case .nothing:
          reasons.append(.unnamed(tlv.type))
        case .untrusted(let id):
          reasons.append(.untrusted(id))
        case .key(let key):
          guard key.algorithm.signatureTLV == tlv.type else {
            reasons.append(.wrongKind(tlv.type, key))
            continue
          }
          if key.isValidSignature(tlv.value, digest: digest) { return .verified(key) }
          reasons.append(.doesNotVerify(tlv.type, key))
        }
      case .rsa2048PSS, .rsa3072PSS, .ecdsa224:
        named = .nothing
        reasons.append(.unsupported(tlv.type))
      default:
        continue
      }
    }
    guard let worst = reasons.max(by: { $0.weight < $1.weight }) else {
      return .rejected(trusted.isEmpty ? "no trusted keys are configured" : "the image is not signed")
    }
    return .rejected(worst.description)
  }

  /// What the last KEYHASH or PUBKEY TLV named.
  private enum Named {
    case nothing
    case key(ImagePublicKey)
    /// A key the device does not trust, by short id.
    case untrusted(String)
  }

  /// Why one signature TLV did not make the image authentic.
  private enum Reason: CustomStringConvertible {
    case unnamed(MCUbootTLVType)
    case untrusted(String)
    case wrongKind(MCUbootTLVType, ImagePublicKey)
    case unsupported(MCUbootTLVType)
    case doesNotVerify(MCUbootTLVType, ImagePublicKey)

    /// A bad signature by a trusted key says more than an unknown key, which says more than a
    /// signature no key hash names.
    var weight: Int {
      switch self {
      case .unnamed: 0
      case .unsupported: 1
      case .untrusted: 2
      case .wrongKind: 3
      case .doesNotVerify: 4
      }
    }

    var description: String {
      switch self {
      case .unnamed(let type): "the \(type) signature has no KEYHASH or PUBKEY TLV before it naming its key"
      case .untrusted(let id): "signed by a key this device does not trust (key hash \(id))"
      case .wrongKind(let type, let key): "a \(type) signature cannot come from the \(key)"
      case .unsupported(let type): "signed with \(type); only ED25519 and ECDSA_SIG (P-256) are checked"
      case .doesNotVerify(let type, let key): "the \(type) signature does not verify with the \(key)"
      }
    }
  }
}
