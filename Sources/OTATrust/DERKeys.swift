/// The few fixed DER shapes of Ed25519 keys (RFC 8410), and names for keys this project refuses.
/// swift-crypto reads and writes P-256 keys' DER itself; for Curve25519 it only has raw bytes.
enum DERKeys {
  /// SubjectPublicKeyInfo { AlgorithmIdentifier { id-Ed25519 }, BIT STRING (32 bytes) }.
  static let ed25519PublicPrefix: [UInt8] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
  ]
  /// PKCS#8 PrivateKeyInfo { version 0, { id-Ed25519 }, OCTET STRING { OCTET STRING (32 bytes) } }:
  /// what imgtool and OpenSSL write for an unencrypted Ed25519 key.
  static let ed25519PrivatePrefix: [UInt8] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
  ]

  /// SubjectPublicKeyInfo { AlgorithmIdentifier { id-X25519 }, BIT STRING (32 bytes) }.
  static let x25519PublicPrefix: [UInt8] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x03, 0x21, 0x00,
  ]
  /// PKCS#8 PrivateKeyInfo { version 0, { id-X25519 }, OCTET STRING { OCTET STRING (32 bytes) } }:
  /// what `imgtool keygen -t x25519` writes.
  static let x25519PrivatePrefix: [UInt8] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20,
  ]

  /// The error for DER bytes that are not an X25519, P-256 or RSA key.
  static func unsupportedEncryptionKeyError(_ der: [UInt8], what: String) -> KeyError {
    if contains(der, [0x2b, 0x65, 0x70]) {
      return .unsupported("the \(what) is Ed25519, a signing key; encryption needs X25519, P-256 or RSA-2048")
    }
    if contains(der, [0x2b, 0x81, 0x04, 0x00, 0x22]) {
      return .unsupported("the \(what) is on P-384; MCUboot wraps image keys for X25519, P-256 or RSA-2048")
    }
    return .malformed(
      "the \(what) is neither an X25519, a P-256 nor an RSA-2048 key (\(der.count) DER bytes)")
  }

  private static let knownAlgorithms: [(oid: [UInt8], name: String)] = [
    ([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01], "RSA"),
    ([0x2b, 0x81, 0x04, 0x00, 0x22], "ECDSA P-384"),
    ([0x2b, 0x65, 0x6e], "X25519 (an encryption key, not a signing key)"),
    ([0x2b, 0x65, 0x70], "Ed25519 in an unexpected encoding"),
    ([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01], "an elliptic-curve key on a curve other than P-256"),
  ]

  /// The error for DER bytes that are not an Ed25519 or P-256 key: names the algorithm when its
  /// object identifier is recognizable.
  static func unsupportedKeyError(_ der: [UInt8], what: String) -> KeyError {
    for (oid, name) in knownAlgorithms where contains(der, oid) {
      return .unsupported("the \(what) is \(name); only Ed25519 and ECDSA P-256 keys are supported")
    }
    return .malformed("the \(what) is neither an Ed25519 nor an ECDSA P-256 key (\(der.count) DER bytes)")
  }

  private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
    guard bytes.count >= needle.count else { return false }
    for start in 0...(bytes.count - needle.count)
    where bytes[start..<start + needle.count].elementsEqual(needle) {
      return true
    }
    return false
  }
}
