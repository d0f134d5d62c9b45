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

  public var algorithm: SigningAlgorithm {
    switch key {
    case .ed25519: .ed25519
    case .ecdsaP256: .ecdsaP256
    }
  }

  /// A fresh key from the system's random source.
  public static func generate(_ algorithm: SigningAlgorithm) -> ImageSigningKey {
    switch algorithm {
    case .ed25519:
      ImageSigningKey(key: .ed25519(raw: Array(Curve25519.Signing.PrivateKey().rawRepresentation)))
    case .ecdsaP256: ImageSigningKey(key: .ecdsaP256(raw: Array(P256.Signing.PrivateKey().rawRepresentation)))
    }
  }

  private init(key: Key) { self.key = key }

  public init(pem text: String) throws(KeyError) {
    let block = try PEMBlock(text: text)
    switch block.label {
    case "PRIVATE KEY":
      let der = block.der
      if der.count == DERKeys.ed25519PrivatePrefix.count + 32, der.starts(with: DERKeys.ed25519PrivatePrefix)
      {
        do {
          key = .ed25519(
            raw: Array(try Curve25519.Signing.PrivateKey(rawRepresentation: der.suffix(32)).rawRepresentation)
          )
        } catch {
          throw .malformed("the Ed25519 private key is not 32 valid bytes")
        }
      } else if let p256 = try? P256.Signing.PrivateKey(derRepresentation: der) {
        key = .ecdsaP256(raw: Array(p256.rawRepresentation))
      } else {
        throw DERKeys.unsupportedKeyError(der, what: "private key")
      }
    case "EC PRIVATE KEY":
      guard let p256 = try? P256.Signing.PrivateKey(derRepresentation: block.der) else {
        throw DERKeys.unsupportedKeyError(block.der, what: "private key")
      }
      key = .ecdsaP256(raw: Array(p256.rawRepresentation))
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
  public var pem: String {
    switch key {
    case .ed25519(let raw):
      return PEMBlock(label: "PRIVATE KEY", der: DERKeys.ed25519PrivatePrefix + raw).text
    case .ecdsaP256(let raw):
      // The bytes came from a valid key, so rebuilding it cannot fail.
      let key = try! P256.Signing.PrivateKey(rawRepresentation: raw)
      return PEMBlock(label: "PRIVATE KEY", der: Array(key.derRepresentation)).text
    }
  }

  public var publicKey: ImagePublicKey {
    switch key {
    case .ed25519(let raw):
      ImagePublicKey(ed25519: try! Curve25519.Signing.PrivateKey(rawRepresentation: raw).publicKey)
    case .ecdsaP256(let raw):
      ImagePublicKey(p256: try! P256.Signing.PrivateKey(rawRepresentation: raw).publicKey)
    }
  }

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
