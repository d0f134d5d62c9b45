import OTATrust

/// The `[trust]` section: which keys an image must be signed by, whether it may be older than the
/// confirmed one, and the device's own key for encrypted images.
///
///     [trust]
///     keys = ["/etc/otad/keys/release.pub.pem"]   # PEM public keys, Ed25519 or ECDSA P-256
///     allow-downgrade = false
///     decryption-key = "/etc/otad/keys/device.pem" # X25519, P-256, RSA-2048 (PEM) or AES-KW (base64), mode 0600
public struct TrustConfiguration: Equatable, Sendable {
  /// PEM files of trusted public keys. None: images need no signature (their hash is still checked).
  public var keyFiles: [String] = []
  public var allowDowngrade = false
  /// The device's private key for encrypted images. None: an encrypted image is refused.
  public var decryptionKeyFile: String?

  public init() {}

  /// A key file as read: its text and permission bits; nil when it cannot be read.
  public typealias ReadKeyFile = (String) -> (text: String, permissions: UInt32)?

  /// Reads every key file. A file that cannot be read, is no key, or is a private key (which has
  /// no business on the device) is an error naming it; so is a decryption key that anyone but its
  /// owner may read, or that is not a private key of a kind MCUboot wraps image keys for.
  public func imagePolicy(readKeyFile: ReadKeyFile) throws(ConfigurationError) -> ImagePolicy {
    var policy = try imagePolicy(readFile: { readKeyFile($0)?.text })
    guard let path = decryptionKeyFile else { return policy }
    guard let file = readKeyFile(path) else {
      throw ConfigurationError("[trust] decryption-key: cannot read \(path)")
    }
    guard file.permissions & 0o077 == 0 else {
      throw ConfigurationError(
        "[trust] decryption-key: \(path) has mode \(String(file.permissions, radix: 8)); a private key must be "
          + "readable by its owner only: chmod 600 \(path)")
    }
    do {
      policy.decryptionKey = try ImageDecryptionKey(keyFile: file.text)
    } catch {
      throw ConfigurationError("[trust] decryption-key: \(path): \(error)")
    }
    return policy
  }

  /// Reads every trusted key file (the decryption key is not read here).
  public func imagePolicy(readFile: (String) -> String?) throws(ConfigurationError) -> ImagePolicy {
    var keys: [ImagePublicKey] = []
    for path in keyFiles {
      guard let text = readFile(path) else {
        throw ConfigurationError("[trust] keys: cannot read \(path)")
      }
      // The whole file, not its first block: a private key after the public one is refused too.
      if text.contains("PRIVATE KEY-----") {
        throw ConfigurationError(
          "[trust] keys: \(path) holds a private key; give the device only the public half "
            + "(otactl image keygen --public, or imgtool getpub), and keep the private key off it")
      }
      let blocks = text.components(separatedBy: "-----BEGIN ").count - 1
      if blocks > 1 {
        throw ConfigurationError(
          "[trust] keys: \(path) holds \(blocks) PEM blocks; give one public key per file (list each file)")
      }
      do {
        guard try PEMBlock(text: text).label == "PUBLIC KEY" else {
          throw ConfigurationError(
            "[trust] keys: \(path) is not a public key; give the device only the public half "
              + "(otactl image keygen --public, or imgtool getpub)")
        }
        let key = try ImagePublicKey(pem: text)
        if !keys.contains(key) { keys.append(key) }
      } catch let error as ConfigurationError {
        throw error
      } catch {
        throw ConfigurationError("[trust] keys: \(path): \(error)")
      }
    }
    return ImagePolicy(trustedKeys: keys, allowDowngrade: allowDowngrade)
  }
}
