import Crypto
import OTAWire

/// A public key images may be signed with: what the device trusts (`[trust] keys` in otad's
/// configuration) and what `otactl image inspect --key` checks against.
///
/// Its identity is MCUboot's: the SHA-256 of the key's DER SubjectPublicKeyInfo, the value of an
/// image's KEYHASH TLV (a PUBKEY TLV carries the DER bytes themselves).
public struct ImagePublicKey: Sendable, Equatable, CustomStringConvertible {
  public let algorithm: SigningAlgorithm
  /// DER SubjectPublicKeyInfo: what imgtool hashes into KEYHASH.
  public let der: [UInt8]
  /// SHA-256 of `der`.
  public let keyHash: [UInt8]

  // swift-crypto's key types are not Sendable: the key is kept as its DER and rebuilt to verify.

  init(ed25519 key: Curve25519.Signing.PublicKey) {
    algorithm = .ed25519
    der = DERKeys.ed25519PublicPrefix + Array(key.rawRepresentation)
    keyHash = Array(SHA256.hash(data: der))
  }

  init(p256 key: P256.Signing.PublicKey) {
    algorithm = .ecdsaP256
    der = Array(key.derRepresentation)
    keyHash = Array(SHA256.hash(data: der))
  }

  /// Reads DER SubjectPublicKeyInfo bytes (a PUBKEY TLV's value, or a PEM body).
  public init(der: [UInt8]) throws(KeyError) {
    if der.count == DERKeys.ed25519PublicPrefix.count + 32, der.starts(with: DERKeys.ed25519PublicPrefix) {
      do {
        self.init(ed25519: try Curve25519.Signing.PublicKey(rawRepresentation: der.suffix(32)))
      } catch {
        throw .malformed("the Ed25519 public key is not 32 valid bytes")
      }
      return
    }
    if let p256 = try? P256.Signing.PublicKey(derRepresentation: der) {
      self.init(p256: p256)
      return
    }
    throw DERKeys.unsupportedKeyError(der, what: "public key")
  }

  /// Reads a PEM file's text: a `PUBLIC KEY` block, or a private key (its public half is taken),
  /// so a signer's own key file can be given where a public key is asked for.
  public init(pem text: String) throws(KeyError) {
    let block = try PEMBlock(text: text)
    switch block.label {
    case "PUBLIC KEY":
      try self.init(der: block.der)
    case "PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY":
      self = try ImageSigningKey(pem: text).publicKey
    default:
      throw .unsupported("a PEM block labelled '\(block.label)'; expected PUBLIC KEY or PRIVATE KEY")
    }
  }

  /// The key as a `PUBLIC KEY` PEM block, as `imgtool getpub --encoding pem` writes it.
  public var pem: String { PEMBlock(label: "PUBLIC KEY", der: der).text }

  /// Key hash's first 8 bytes in hex: enough to tell keys apart in messages.
  public var shortID: String { Hex.string(keyHash.prefix(8)) }

  public var description: String { "\(algorithm) key \(shortID)" }

  /// True when `signature` (a signature TLV's value) is this key's signature of `digest`.
  public func isValidSignature(_ signature: [UInt8], digest: SHA256Digest) -> Bool {
    if algorithm == .ed25519 {
      // The DER ends with the key's raw 32 bytes (RFC 8410).
      guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: der.suffix(32)) else {
        return false
      }
      return key.isValidSignature(signature, for: Array(digest))
    }
    // imgtool --pad-sig appends up to two zero bytes after the DER SEQUENCE; MCUboot reads the
    // SEQUENCE's own length, and so does this.
    guard let key = try? P256.Signing.PublicKey(derRepresentation: der), signature.count >= 2,
      signature[0] == 0x30, signature[1] < 0x80, Int(signature[1]) + 2 <= signature.count,
      signature[(Int(signature[1]) + 2)...].allSatisfy({ $0 == 0 }),
      let parsed = try? P256.Signing.ECDSASignature(
        derRepresentation: signature.prefix(Int(signature[1]) + 2))
    else { return false }
    return key.isValidSignature(parsed, for: digest)
  }
}
