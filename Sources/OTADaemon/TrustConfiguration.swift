import OTATrust

/// The `[trust]` section: which keys an image must be signed by, and whether it may be older than
/// the confirmed one.
///
///     [trust]
///     keys = ["/etc/otad/keys/release.pub.pem"]   # PEM public keys, Ed25519 or ECDSA P-256
///     allow-downgrade = false
public struct TrustConfiguration: Equatable, Sendable {
  /// PEM files of trusted public keys. None: images need no signature (their hash is still checked).
  public var keyFiles: [String] = []
  public var allowDowngrade = false

  public init() {}

  /// Reads every key file. A file that cannot be read, is no key, or is a private key (which has
  /// no business on the device) is an error naming it.
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
