import OTAWire

/// The kinds of device key MCUboot wraps an image's AES key for, named as `imgtool keygen -t`
/// names them (`aes-kw`, which imgtool does not make: a shared AES key-wrap key, RFC 3394, kept as
/// MCUboot keeps its `enc-aes128kw.b64`: the raw key in base64).
public enum EncryptionAlgorithm: String, Sendable, CaseIterable, CustomStringConvertible {
  case x25519
  case p256 = "ecdsa-p256"
  case rsa2048 = "rsa-2048"
  case aesKW = "aes-kw"

  public var description: String {
    switch self {
    case .x25519: "X25519"
    case .p256: "P-256"
    case .rsa2048: "RSA-2048"
    case .aesKW: "AES key wrap"
    }
  }

  /// The TLVs that carry a key wrapped for this kind of key.
  public var tlvTypes: [MCUbootTLVType] {
    switch self {
    case .x25519: [.encryptedX25519, .encryptedX25519SHA512]
    case .p256: [.encryptedEC256]
    case .rsa2048: [.encryptedRSA2048]
    case .aesKW: [.encryptedKW]
    }
  }
}
