import OTADaemon
import TOMLKit

/// The `[trust]` table read into `TrustConfiguration`.
extension TrustConfiguration {
  mutating func read(_ table: TOMLTable) throws(ConfigurationError) {
    if let value = table["keys"] {
      guard let array = value.array else {
        throw ConfigurationError(
          "[trust] keys must be a list of PEM file paths, like [\"/etc/otad/keys/release.pub.pem\"]")
      }
      var files: [String] = []
      for element in array {
        guard let path = element.string, !path.isEmpty else {
          throw ConfigurationError("[trust] keys must hold file paths (strings)")
        }
        files.append(path)
      }
      keyFiles = files
    }
    if let value = table["allow-downgrade"] {
      guard let flag = value.bool else {
        throw ConfigurationError("[trust] allow-downgrade must be true or false")
      }
      allowDowngrade = flag
    }
    if let value = table["decryption-key"] {
      guard let path = value.string, !path.isEmpty else {
        throw ConfigurationError("[trust] decryption-key must be the path of a PEM private key file")
      }
      decryptionKeyFile = path
    }
  }
}
