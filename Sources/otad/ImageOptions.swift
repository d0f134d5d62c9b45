import ArgumentParser
import OTAConfiguration
import OTADaemon
import OTAWire

/// What the device accepts and what it ran first: the keys images are checked against, downgrades,
/// the decryption key, the factory version. Every command that reads or changes the boot state
/// takes them (its checks of the slots' images and the status report use them).
struct ImageOptions: ConfigurationOptions {
  @Option(name: .customLong("factory-version"), help: "The version slot A runs on a device never updated.")
  var factoryVersion: String?

  @Option(
    name: .customLong("trusted-key"),
    help: "A PEM public key images must be signed by (repeat for more; adds to [trust] keys).")
  var trustedKeys: [String] = []

  @Flag(name: .customLong("allow-downgrade"), help: "Accept images older than the confirmed one.")
  var allowDowngrade = false

  @Option(
    name: .customLong("decryption-key"),
    help:
      "The device's key for encrypted images: X25519, P-256 or RSA-2048 (PEM), AES-KW (base64); mode 0600 ([trust] decryption-key)."
  )
  var decryptionKey: String?

  func apply(to configuration: inout DaemonConfiguration) throws {
    if let factoryVersion {
      guard let version = Version(text: factoryVersion) else {
        throw ValidationError("--factory-version \(factoryVersion) is not a version like 1.2.3")
      }
      configuration.factoryVersion = version
    }
    configuration.trust.keyFiles += trustedKeys
    if allowDowngrade { configuration.trust.allowDowngrade = true }
    if let decryptionKey { configuration.trust.decryptionKeyFile = decryptionKey }
  }
}
