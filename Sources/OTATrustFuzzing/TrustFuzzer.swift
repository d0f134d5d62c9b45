import Crypto
import OTAFuzzing
import OTATrust
import OTAWire

/// The `trust` fuzz target: what reads keys and signatures. The first byte picks how the rest is read:
/// - PEM text for `PEMBlock`, `ImagePublicKey(pem:)` and `ImageSigningKey(pem:)` (key files);
/// - DER bytes for `ImagePublicKey(der:)` (a PUBKEY TLV's value comes from the air);
/// - an image for `ImageSignatureCheck` against the project's test keys (so seeds signed by them
///   reach the signature verification itself) and for `MCUbootImageInspection` with its text.
/// Invariants: nothing traps; whatever decodes encodes back to an equal value; a key's hash is the
/// SHA-256 of its DER; a verdict is the same twice and names a trusted key of the signature's kind.
public enum TrustFuzzer {
  public static func check(_ input: [UInt8]) -> [InvariantViolation] {
    guard let selector = input.first else { return [] }
    let rest = Array(input.dropFirst())
    switch selector % 3 {
    case 0: return pem(String(decoding: rest, as: UTF8.self))
    case 1: return der(rest)
    default: return image(rest)
    }
  }

  static func pem(_ text: String) -> [InvariantViolation] {
    var found: [InvariantViolation] = []
    if let block = try? PEMBlock(text: text), (try? PEMBlock(text: block.text)) != block {
      found.append(InvariantViolation("pem round trip", "'\(block.label)' block of \(block.der.count) bytes"))
    }
    if let key = try? ImagePublicKey(pem: text) { found += roundTrips(key) }
    if let key = try? ImageSigningKey(pem: text),
      (try? ImageSigningKey(pem: key.pem))?.publicKey != key.publicKey
    {
      found.append(
        InvariantViolation("private key round trip", "\(key.algorithm) key \(key.publicKey.shortID)"))
    }
    return found
  }

  static func der(_ bytes: [UInt8]) -> [InvariantViolation] {
    guard let key = try? ImagePublicKey(der: bytes) else { return [] }
    return roundTrips(key)
  }

  static func roundTrips(_ key: ImagePublicKey) -> [InvariantViolation] {
    var found: [InvariantViolation] = []
    if (try? ImagePublicKey(der: key.der)) != key {
      found.append(InvariantViolation("der round trip", "\(key)"))
    }
    if (try? ImagePublicKey(pem: key.pem)) != key {
      found.append(InvariantViolation("pem round trip", "\(key)"))
    }
    if key.keyHash != Array(SHA256.hash(data: key.der)) {
      found.append(InvariantViolation("key hash", "\(key) hash is not the SHA-256 of its DER"))
    }
    return found
  }

  static func image(_ bytes: [UInt8]) -> [InvariantViolation] {
    var found: [InvariantViolation] = []
    if let inspection = try? MCUbootImageInspection(image: bytes, keys: trusted) {
      _ = inspection.text
    }
    guard let layout = try? MCUbootImageLayout(parsing: bytes), let first = verdict(ofImage: bytes) else {
      return found
    }
    if verdict(ofImage: bytes) != first {
      found.append(InvariantViolation("deterministic verdict", "two checks of one image disagree"))
    }
    if case .verified(let key) = first {
      if !trusted.contains(key) { found.append(InvariantViolation("trusted key", "verified by \(key)")) }
      if !layout.unprotectedTLVs.contains(where: { $0.type == key.algorithm.signatureTLV }) {
        found.append(
          InvariantViolation("signature present", "verified by \(key) without a \(key.algorithm) TLV"))
      }
    }
    return found
  }

  /// The signature verdict on an image against the test keys (nil when it does not parse): lets the
  /// tests show that the seeds reach a signature that verifies.
  public static func verdict(ofImage bytes: [UInt8]) -> ImageSignatureCheck.Verdict? {
    guard let layout = try? MCUbootImageLayout(parsing: bytes),
      layout.header.hashedLength <= UInt64(bytes.count)
    else { return nil }
    let digest = SHA256.hash(data: bytes[0..<Int(layout.header.hashedLength)])
    return ImageSignatureCheck.check(layout, digest: digest, trusted: trusted)
  }

  /// Images/keys/test-ed25519.pub.pem and test-ecdsa-p256.pub.pem: they signed the seed images.
  static let trusted: [ImagePublicKey] = [
    """
    -----BEGIN PUBLIC KEY-----
    MCowBQYDK2VwAyEAi+KIs4ZPfJkHRCZRfWX03u7CsaoNo1GYZq/38v4kTVE=
    -----END PUBLIC KEY-----
    """,
    """
    -----BEGIN PUBLIC KEY-----
    MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAES/7lk8cxU57vRjNdAheqkWpJjjuY
    ioOH4H8v6p38apvQF1T+bkl2AoWI82HN0SAGpIFDz5y1lquWHxxVHPw8dg==
    -----END PUBLIC KEY-----
    """,
  ].compactMap { try? ImagePublicKey(pem: $0) }
}
