import Crypto

/// A private key that signs images: made by `otactl image keygen`, read from the PKCS#8 PEM files
/// that command and `imgtool keygen` write (a SEC1 `EC PRIVATE KEY` is read too).
public struct ImageSigningKey: Sendable {
  /// The raw private scalar or seed (32 bytes): swift-crypto's key types are not Sendable, so the
  /// key is rebuilt from its bytes where it is used.
  private enum Key: Sendable {
    case ed25519(raw: [UInt8])
    case ecdsaP256(raw: [UInt8])
  }

  private let key: Key
  /// Derived once from the live key, so nothing below has to rebuild it (and cannot fail).
  public let publicKey: ImagePublicKey
  private let pkcs8: [UInt8]

  public var algorithm: SigningAlgorithm {
    switch key {
    case .ed25519: .ed25519
    case .ecdsaP256: .ecdsaP256
    }
  }

  /// A fresh key from the system's random source.
  public static func generate(_ algorithm: SigningAlgorithm) -> ImageSigningKey {
    switch algorithm {
    case .ed25519: ImageSigningKey(ed25519: Curve25519.Signing.PrivateKey())
    case .ecdsaP256: ImageSigningKey(p256: P256.Signing.PrivateKey())
    }
  }

  private init(ed25519: Curve25519.Signing.PrivateKey) {
    let raw = Array(ed25519.rawRepresentation)
    key = .ed25519(raw: raw)
    publicKey = ImagePublicKey(ed25519: ed25519.publicKey)
    pkcs8 = DERKeys.ed25519PrivatePrefix + raw
  }

  private init(p256: P256.Signing.PrivateKey) {
    key = .ecdsaP256(raw: Array(p256.rawRepresentation))
    publicKey = ImagePublicKey(p256: p256.publicKey)
    pkcs8 = Array(p256.derRepresentation)
  }

  public init(pem text: String) throws(KeyError) {
    self = try Self.read(pem: text)
  }

  private static func read(pem text: String) throws(KeyError) -> ImageSigningKey {
    let block = try PEMBlock(text: text)
    switch block.label {
    case "PRIVATE KEY":
      let der = block.der
      if der.count == DERKeys.ed25519PrivatePrefix.count + 32, der.starts(with: DERKeys.ed25519PrivatePrefix)
      {
        do {
          return ImageSigningKey(
            ed25519: try Curve25519.Signing.PrivateKey(rawRepresentation: der.suffix(32)))
        } catch {
          throw .malformed("the Ed25519 private key is not 32 valid bytes")
        }
      } else if let p256 = try? P256.Signing.PrivateKey(derRepresentation: der) {
        return ImageSigningKey(p256: p256)
      } else {
        throw DERKeys.unsupportedKeyError(der, what: "private key")
      }
    case "EC PRIVATE KEY":
      guard let p256 = try? P256.Signing.PrivateKey(derRepresentation: block.der) else {
        throw DERKeys.unsupportedKeyError(block.der, what: "private key")
      }
      return ImageSigningKey(p256: p256)
    case "ENCRYPTED PRIVATE KEY":
      throw .unsupported(
        "the private key is password-protected; give an unencrypted PKCS#8 key (imgtool keygen without --password)"
      )
    case "RSA PRIVATE KEY":
      throw .unsupported("the private key is RSA; only Ed25519 and ECDSA P-256 keys are supported")
    case "PUBLIC KEY":
      throw .unsupported("this is a public key; signing needs the private key file")
    default:
      throw .unsupported("a PEM block labelled '\(block.label)'; expected PRIVATE KEY")
    }
  }

  /// PKCS#8 `PRIVATE KEY` PEM, unencrypted: the format imgtool writes and reads.
  public var pem: String { PEMBlock(label: "PRIVATE KEY", der: pkcs8).text }

  /// The signature TLV's value for an image whose hashed range has `digest`: Ed25519 signs the 32
  /// digest bytes, ECDSA signs with the digest as its message hash (DER-encoded, unpadded).
  public func sign(digest: SHA256Digest) throws(KeyError) -> [UInt8] {
    do {
      switch key {
      case .ed25519(let raw):
        return Array(try Curve25519.Signing.PrivateKey(rawRepresentation: raw).signature(for: Array(digest)))
      case .ecdsaP256(let raw):
        return Array(
          try P256.Signing.PrivateKey(rawRepresentation: raw).signature(for: digest).derRepresentation)
      }
    } catch {
      throw .malformed("signing failed: \(error)")
    }
  }
}
