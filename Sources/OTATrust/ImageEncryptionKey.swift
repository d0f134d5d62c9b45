import Crypto
import CryptoExtras
import OTAWire

/// A device's public key for encrypted images: what an image's AES key is wrapped for, as
/// `imgtool sign --encrypt` wraps it (ECIES for X25519 and P-256, OAEP with SHA-256 for RSA-2048).
/// Read from a `PUBLIC KEY` PEM, or from the private key's PEM (as imgtool accepts it too).
public struct ImageEncryptionKey: Sendable, Equatable {
  enum Key: Sendable, Equatable {
    case x25519(raw: [UInt8])
    case p256(x963: [UInt8])
    case rsa2048(spki: [UInt8])
    /// Symmetric: the same key wraps and unwraps (no public half).
    case aesKW(kek: [UInt8])
  }

  let key: Key

  public var algorithm: EncryptionAlgorithm {
    switch key {
    case .x25519: .x25519
    case .p256: .p256
    case .rsa2048: .rsa2048
    case .aesKW: .aesKW
    }
  }

  init(kek: [UInt8]) { key = .aesKW(kek: kek) }

  /// A key file's text: a PEM public (or private) key, or a key-wrap key in base64.
  public init(keyFile text: String) throws(KeyError) {
    guard text.contains("-----BEGIN") else {
      self.init(kek: try ImageDecryptionKey.keyWrapKey(text))
      return
    }
    try self.init(pem: text)
  }

  init(x25519: Curve25519.KeyAgreement.PublicKey) { key = .x25519(raw: Array(x25519.rawRepresentation)) }
  init(p256: P256.KeyAgreement.PublicKey) { key = .p256(x963: Array(p256.x963Representation)) }
  init(rsa: _RSA.Encryption.PublicKey) throws(KeyError) {
    guard rsa.keySizeInBits == 2048 else {
      throw .unsupported(
        "the RSA key has \(rsa.keySizeInBits) bits; MCUboot's ENC_RSA2048 wraps image keys for 2048-bit keys only"
      )
    }
    key = .rsa2048(spki: Array(rsa.derRepresentation))
  }

  public init(pem text: String) throws(KeyError) {
    let block = try PEMBlock(text: text)
    guard block.label == "PUBLIC KEY" else {
      self = try ImageDecryptionKey(pem: text).encryptionKey
      return
    }
    let der = block.der
    if der.count == DERKeys.x25519PublicPrefix.count + 32, der.starts(with: DERKeys.x25519PublicPrefix) {
      guard let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: der.suffix(32)) else {
        throw .malformed("the X25519 public key is not 32 valid bytes")
      }
      self.init(x25519: key)
    } else if let p256 = try? P256.KeyAgreement.PublicKey(derRepresentation: der) {
      self.init(p256: p256)
    } else if let rsa = try? _RSA.Encryption.PublicKey(derRepresentation: der) {
      try self.init(rsa: rsa)
    } else {
      throw DERKeys.unsupportedEncryptionKeyError(der, what: "public key")
    }
  }

  /// `PUBLIC KEY` PEM (SubjectPublicKeyInfo), as `imgtool getpub -e pem` writes it; for a key-wrap
  /// key, the key itself in base64 (it has no public half).
  public var pem: String {
    switch key {
    case .x25519(let raw): PEMBlock(label: "PUBLIC KEY", der: DERKeys.x25519PublicPrefix + raw).text
    case .p256(let x963):
      // The bytes came from a live key: rebuilding it cannot fail.
      (try? P256.KeyAgreement.PublicKey(x963Representation: x963))?.pemRepresentation ?? ""
    case .rsa2048(let spki): PEMBlock(label: "PUBLIC KEY", der: spki).text
    case .aesKW(let kek): Base64.encode(kek) + "\n"
    }
  }

  /// `contentKey` wrapped for this key: the TLV an encrypted image carries (a fresh ephemeral key
  /// for ECIES, fresh OAEP randomness for RSA, as imgtool does for each image).
  public func wrap(_ contentKey: ImageContentKey) throws(KeyError) -> MCUbootTLV {
    switch key {
    case .x25519(let raw):
      guard let device = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw) else {
        throw .malformed("the X25519 public key is not 32 valid bytes")
      }
      let ephemeral = Curve25519.KeyAgreement.PrivateKey()
      guard let shared = try? ephemeral.sharedSecretFromKeyAgreement(with: device) else {
        throw .malformed("X25519 with this public key gives no shared secret (a low-order point)")
      }
      let value = Self.seal(
        contentKey, shared: shared, ephemeral: Array(ephemeral.publicKey.rawRepresentation))
      return MCUbootTLV(type: .encryptedX25519, value: value)
    case .p256(let x963):
      guard let device = try? P256.KeyAgreement.PublicKey(x963Representation: x963) else {
        throw .malformed("the P-256 public key is not a point on the curve")
      }
      let ephemeral = P256.KeyAgreement.PrivateKey()
      guard let shared = try? ephemeral.sharedSecretFromKeyAgreement(with: device) else {
        throw .malformed("P-256 key agreement with this public key failed")
      }
      let value = Self.seal(
        contentKey, shared: shared, ephemeral: Array(ephemeral.publicKey.x963Representation))
      return MCUbootTLV(type: .encryptedEC256, value: value)
    case .aesKW(let kek):
      do {
        let wrapped = try AES.KeyWrap.wrap(
          SymmetricKey(data: contentKey.bytes), using: SymmetricKey(data: kek))
        return MCUbootTLV(type: .encryptedKW, value: Array(wrapped))
      } catch {
        throw .malformed("AES key wrap failed: \(error)")
      }
    case .rsa2048(let spki):
      do {
        let device = try _RSA.Encryption.PublicKey(derRepresentation: spki)
        return MCUbootTLV(
          type: .encryptedRSA2048,
          value: Array(try device.encrypt(contentKey.bytes, padding: .PKCS1_OAEP_SHA256)))
      } catch {
        throw .malformed("RSA-OAEP with this public key failed: \(error)")
      }
    }
  }

  /// ECIES as imgtool's `ecies_hkdf`: ephemeral public key, HMAC-SHA256 tag, encrypted key.
  private static func seal(_ contentKey: ImageContentKey, shared: SharedSecret, ephemeral: [UInt8]) -> [UInt8]
  {
    let derived = ImageKeyExchange.derive(shared: shared, keyLength: contentKey.bytes.count, mac: .sha256)
    let cipherKey = ImageKeyExchange.crypt(contentKey.bytes, with: derived.aes)
    return ephemeral + ImageKeyExchange.tag(cipherKey, macKey: derived.mac, mac: .sha256) + cipherKey
  }
}
