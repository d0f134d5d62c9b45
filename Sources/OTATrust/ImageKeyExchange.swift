import Crypto
import OTAWire

/// What MCUboot and imgtool agree on to wrap an image's AES key for one device (ECIES): an
/// ephemeral key pair's shared secret with the device's key goes through HKDF (no salt, info
/// "MCUBoot_ECIES_v1") into an AES key and an HMAC key; the AES key encrypts the content key with
/// AES-CTR from counter 0, the HMAC tags that ciphertext. The TLV holds the ephemeral public key,
/// the tag and the encrypted key, in that order.
enum ImageKeyExchange {
  static let info = Array("MCUBoot_ECIES_v1".utf8)

  /// The HMAC hash: SHA-256 for ENC_EC256 and ENC_X25519, SHA-512 for ENC_X25519_SHA512.
  enum MAC {
    case sha256
    case sha512

    var byteCount: Int { self == .sha256 ? 32 : 64 }
  }

  /// The AES key (its first `keyLength` bytes) and the HMAC key derived from the shared secret.
  static func derive(shared: SharedSecret, keyLength: Int, mac: MAC) -> (aes: [UInt8], mac: [UInt8]) {
    let length = keyLength + mac.byteCount
    let derived: SymmetricKey =
      switch mac {
      case .sha256:
        shared.hkdfDerivedSymmetricKey(
          using: SHA256.self, salt: [], sharedInfo: info, outputByteCount: length)
      case .sha512:
        shared.hkdfDerivedSymmetricKey(
          using: SHA512.self, salt: [], sharedInfo: info, outputByteCount: length)
      }
    let bytes = derived.withUnsafeBytes(Array.init)
    return (Array(bytes[..<keyLength]), Array(bytes[keyLength...]))
  }

  static func tag(_ cipherKey: [UInt8], macKey: [UInt8], mac: MAC) -> [UInt8] {
    switch mac {
    case .sha256: Array(HMAC<SHA256>.authenticationCode(for: cipherKey, using: SymmetricKey(data: macKey)))
    case .sha512: Array(HMAC<SHA512>.authenticationCode(for: cipherKey, using: SymmetricKey(data: macKey)))
    }
  }

  static func tagIsValid(_ tag: [UInt8], for cipherKey: [UInt8], macKey: [UInt8], mac: MAC) -> Bool {
    let key = SymmetricKey(data: macKey)
    switch mac {
    case .sha256: return HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: cipherKey, using: key)
    case .sha512: return HMAC<SHA512>.isValidAuthenticationCode(tag, authenticating: cipherKey, using: key)
    }
  }

  /// The content key encrypted with the derived AES key (AES-CTR from counter 0), or decrypted.
  static func crypt(_ key: [UInt8], with aes: [UInt8]) -> [UInt8] {
    guard let cipher = ImageContentKey(bytes: aes) else {
      preconditionFailure("a derived AES key is 16 or 32 bytes, not \(aes.count)")
    }
    return cipher.crypt(key, atPayloadOffset: 0)
  }
}
