import Crypto
import CryptoExtras
import OTAWire

/// The device's private key for encrypted images: what unwraps the AES key imgtool wrapped for it
/// (`imgtool sign --encrypt PUBLIC`). X25519 (ENC_X25519, ENC_X25519_SHA512), P-256 (ENC_EC256) and
/// RSA-2048 (ENC_RSA2048, OAEP with SHA-256), read from the PKCS#8 PEM files `imgtool keygen -t
/// x25519|ecdsa-p256|rsa-2048` and `otactl image keygen` write (SEC1 and PKCS#1 too); and a shared
/// AES key-wrap key (ENC_KW, RFC 3394, 16 or 32 bytes), read from base64 text as MCUboot keeps it.
public struct ImageDecryptionKey: Sendable, Equatable {
  /// The raw private key (X25519, P-256) or its DER (RSA): swift-crypto's key types are not all
  /// Sendable, so each use rebuilds the key from these bytes.
  enum Key: Sendable, Equatable {
    case x25519(raw: [UInt8])
    case p256(raw: [UInt8])
    case rsa2048(der: [UInt8])
    case aesKW(kek: [UInt8])
  }

  let key: Key
  /// The matching public key: what `imgtool sign --encrypt` and `otactl image create --encrypt` take.
  public let encryptionKey: ImageEncryptionKey

  public var algorithm: EncryptionAlgorithm { encryptionKey.algorithm }

  /// A fresh key from the system's random source.
  public static func generate(_ algorithm: EncryptionAlgorithm) throws(KeyError) -> ImageDecryptionKey {
    switch algorithm {
    case .x25519: return ImageDecryptionKey(x25519: Curve25519.KeyAgreement.PrivateKey())
    case .p256: return ImageDecryptionKey(p256: P256.KeyAgreement.PrivateKey())
    case .rsa2048:
      do {
        return try ImageDecryptionKey(rsa: _RSA.Encryption.PrivateKey(keySize: .bits2048))
      } catch {
        throw .malformed("making an RSA-2048 key failed: \(error)")
      }
    case .aesKW:
      return ImageDecryptionKey(kek: SymmetricKey(size: .bits128).withUnsafeBytes(Array.init))
    }
  }

  private init(kek: [UInt8]) {
    key = .aesKW(kek: kek)
    encryptionKey = ImageEncryptionKey(kek: kek)
  }

  /// A key file's text: a PEM private key, or a key-wrap key in base64 (16 or 32 bytes).
  public init(keyFile text: String) throws(KeyError) {
    guard text.contains("-----BEGIN") else {
      self.init(kek: try Self.keyWrapKey(text))
      return
    }
    try self.init(pem: text)
  }

  /// The bytes of a key-wrap key written as base64 (MCUboot's `enc-aes128kw.b64`).
  static func keyWrapKey(_ text: String) throws(KeyError) -> [UInt8] {
    let compact = String(text.filter { !$0.isWhitespace })
    guard let bytes = Base64.decode(compact) else {
      throw .notPEM("neither a PEM block nor base64 (an AES key-wrap key is its 16 or 32 bytes in base64)")
    }
    guard bytes.count == 16 || bytes.count == 32 else {
      throw .malformed("an AES key-wrap key is 16 or 32 bytes; this base64 holds \(bytes.count)")
    }
    return bytes
  }

  private init(x25519: Curve25519.KeyAgreement.PrivateKey) {
    key = .x25519(raw: Array(x25519.rawRepresentation))
    encryptionKey = ImageEncryptionKey(x25519: x25519.publicKey)
  }

  private init(p256: P256.KeyAgreement.PrivateKey) {
    key = .p256(raw: Array(p256.rawRepresentation))
    encryptionKey = ImageEncryptionKey(p256: p256.publicKey)
  }

  private init(rsa: _RSA.Encryption.PrivateKey) throws(KeyError) {
    guard rsa.keySizeInBits == 2048 else {
      throw .unsupported(
        "the RSA key has \(rsa.keySizeInBits) bits; MCUboot's ENC_RSA2048 wraps image keys for 2048-bit keys only"
      )
    }
    key = .rsa2048(der: Array(rsa.derRepresentation))
    encryptionKey = try ImageEncryptionKey(rsa: rsa.publicKey)
  }

  public init(pem text: String) throws(KeyError) {
    let block = try PEMBlock(text: text)
    switch block.label {
    case "PRIVATE KEY":
      let der = block.der
      if der.count == DERKeys.x25519PrivatePrefix.count + 32, der.starts(with: DERKeys.x25519PrivatePrefix) {
        do {
          self.init(x25519: try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: der.suffix(32)))
        } catch {
          throw .malformed("the X25519 private key is not 32 valid bytes")
        }
      } else if let p256 = try? P256.KeyAgreement.PrivateKey(derRepresentation: der) {
        self.init(p256: p256)
      } else if let rsa = try? _RSA.Encryption.PrivateKey(derRepresentation: der) {
        try self.init(rsa: rsa)
      } else {
        throw DERKeys.unsupportedEncryptionKeyError(der, what: "private key")
      }
    case "EC PRIVATE KEY":
      guard let p256 = try? P256.KeyAgreement.PrivateKey(derRepresentation: block.der) else {
        throw DERKeys.unsupportedEncryptionKeyError(block.der, what: "private key")
      }
      self.init(p256: p256)
    case "RSA PRIVATE KEY":
      guard let rsa = try? _RSA.Encryption.PrivateKey(derRepresentation: block.der) else {
        throw .malformed("the RSA private key's DER does not decode")
      }
      try self.init(rsa: rsa)
    case "ENCRYPTED PRIVATE KEY":
      throw .unsupported(
        "the private key is password-protected; a device reads its key unattended: give an unencrypted PKCS#8 key"
      )
    case "PUBLIC KEY":
      throw .unsupported(
        "this is a public key; the device decrypts with its private key (the public one goes to whoever encrypts)"
      )
    default:
      throw .unsupported("a PEM block labelled '\(block.label)'; expected PRIVATE KEY")
    }
  }

  /// PKCS#8 `PRIVATE KEY` PEM, unencrypted, as imgtool writes its keys.
  public var pem: String {
    switch key {
    case .x25519(let raw): PEMBlock(label: "PRIVATE KEY", der: DERKeys.x25519PrivatePrefix + raw).text
    case .p256(let raw):
      // The bytes came from a live key: rebuilding it cannot fail.
      (try? P256.KeyAgreement.PrivateKey(rawRepresentation: raw))?.pemRepresentation ?? ""
    case .rsa2048(let der):
      (try? _RSA.Encryption.PrivateKey(derRepresentation: der))?.pkcs8PEMRepresentation ?? ""
    case .aesKW(let kek): Base64.encode(kek) + "\n"
    }
  }

  /// The content key of an image whose header has `flags` and whose unprotected TLVs are `tlvs`,
  /// unwrapped with this key; the reason when it cannot be.
  public func unwrap(flags: MCUbootHeader.Flags, tlvs: [MCUbootTLV]) -> Result<ImageContentKey, ImageProblem>
  {
    let keyLength: Int
    switch (flags.contains(.encryptedAES128), flags.contains(.encryptedAES256)) {
    case (true, false): keyLength = 16
    case (false, true): keyLength = 32
    case (true, true):
      return .failure(.cannotDecrypt("the header says both ENCRYPTED_AES128 and ENCRYPTED_AES256"))
    case (false, false): return .failure(.cannotDecrypt("the image is not encrypted"))
    }
    let types = algorithm.tlvTypes
    let found = tlvs.filter { types.contains($0.type) }
    guard let tlv = found.first else {
      let present = tlvs.filter { MCUbootTLVType.encryptedKeyTypes.contains($0.type) }.map { "\($0.type)" }
      return .failure(
        .cannotDecrypt(
          present.isEmpty
            ? "the image carries no wrapped key (no ENC_* TLV)"
            : "the image's key is wrapped as \(present.joined(separator: ", ")); this device's key is "
              + "\(algorithm) (\(types.map { "\($0)" }.joined(separator: " or ")))"))
    }
    guard found.count == 1 else {
      return .failure(.malformed("the image has \(found.count) \(tlv.type) TLVs; it must have one"))
    }
    let unwrapped: [UInt8]
    switch unwrapKey(tlv, keyLength: keyLength) {
    case .success(let bytes): unwrapped = bytes
    case .failure(let problem): return .failure(problem)
    }
    guard unwrapped.count == keyLength, let contentKey = ImageContentKey(bytes: unwrapped) else {
      return .failure(
        .cannotDecrypt(
          "the unwrapped key is \(unwrapped.count) bytes but the header's flag says AES-\(keyLength * 8)"))
    }
    return .success(contentKey)
  }

  private func unwrapKey(_ tlv: MCUbootTLV, keyLength: Int) -> Result<[UInt8], ImageProblem> {
    let wrongKey = ImageProblem.cannotDecrypt(
      "the image's key was wrapped for another device key: its \(tlv.type) does not open with this one")
    switch key {
    case .x25519(let raw):
      let mac: ImageKeyExchange.MAC = tlv.type == .encryptedX25519SHA512 ? .sha512 : .sha256
      guard tlv.value.count == 32 + mac.byteCount + keyLength else {
        return .failure(lengthProblem(tlv, expected: 32 + mac.byteCount + keyLength))
      }
      guard let own = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw),
        let ephemeral = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: tlv.value[0..<32]),
        let shared = try? own.sharedSecretFromKeyAgreement(with: ephemeral)
      else { return .failure(wrongKey) }
      return Self.open(
        tlv.value, publicKeyLength: 32, shared: shared, keyLength: keyLength, mac: mac, wrongKey)
    case .p256(let raw):
      guard tlv.value.count == 65 + 32 + keyLength else {
        return .failure(lengthProblem(tlv, expected: 65 + 32 + keyLength))
      }
      guard let own = try? P256.KeyAgreement.PrivateKey(rawRepresentation: raw),
        let ephemeral = try? P256.KeyAgreement.PublicKey(x963Representation: tlv.value[0..<65]),
        let shared = try? own.sharedSecretFromKeyAgreement(with: ephemeral)
      else { return .failure(.cannotDecrypt("ENC_EC256's ephemeral key is not a point on P-256")) }
      return Self.open(
        tlv.value, publicKeyLength: 65, shared: shared, keyLength: keyLength, mac: .sha256, wrongKey)
    case .rsa2048(let der):
      guard tlv.value.count == 256 else { return .failure(lengthProblem(tlv, expected: 256)) }
      guard let own = try? _RSA.Encryption.PrivateKey(derRepresentation: der),
        let plain = try? own.decrypt(tlv.value, padding: .PKCS1_OAEP_SHA256)
      else { return .failure(wrongKey) }
      return .success(Array(plain))
    case .aesKW(let kek):
      guard tlv.value.count == keyLength + 8 else {
        return .failure(lengthProblem(tlv, expected: keyLength + 8))
      }
      // RFC 3394's integrity check fails for another key-wrap key or an altered TLV.
      guard let plain = try? AES.KeyWrap.unwrap(tlv.value, using: SymmetricKey(data: kek)) else {
        return .failure(wrongKey)
      }
      return .success(plain.withUnsafeBytes(Array.init))
    }
  }

  private static func open(
    _ value: [UInt8], publicKeyLength: Int, shared: SharedSecret, keyLength: Int, mac: ImageKeyExchange.MAC,
    _ wrongKey: ImageProblem
  ) -> Result<[UInt8], ImageProblem> {
    let tag = Array(value[publicKeyLength..<publicKeyLength + mac.byteCount])
    let cipherKey = Array(value[(publicKeyLength + mac.byteCount)...])
    let derived = ImageKeyExchange.derive(shared: shared, keyLength: keyLength, mac: mac)
    guard ImageKeyExchange.tagIsValid(tag, for: cipherKey, macKey: derived.mac, mac: mac) else {
      return .failure(wrongKey)
    }
    return .success(ImageKeyExchange.crypt(cipherKey, with: derived.aes))
  }

  private func lengthProblem(_ tlv: MCUbootTLV, expected: Int) -> ImageProblem {
    .malformed(
      "the \(tlv.type) TLV is \(tlv.value.count) bytes; with this header's key length it must be \(expected)")
  }
}
