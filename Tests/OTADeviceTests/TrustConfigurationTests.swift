import OTAConfiguration
import OTADaemon
import OTAStorage
import OTATrust
import Testing

/// `[trust]`: the keys images must be signed by, read defensively, and whether downgrades pass.
@Suite struct TrustConfigurationTests {
  static let release = ImageSigningKey.generate(.ed25519)
  static let backup = ImageSigningKey.generate(.ecdsaP256)

  static let files: [String: String] = [
    "/keys/release.pub.pem": release.publicKey.pem,
    "/keys/backup.pub.pem": backup.publicKey.pem,
    "/keys/release.pem": release.pem,
    "/keys/garbage.pem": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
    "/keys/notes.txt": "just some text",
    // A public key, then the private one in the same file (seen: it was accepted).
    "/keys/both.pem": release.publicKey.pem + release.pem,
    "/keys/two-public.pem": release.publicKey.pem + backup.publicKey.pem,
  ]

  static func policy(_ toml: String) throws -> ImagePolicy {
    try DaemonConfiguration(toml: toml).trust.imagePolicy { files[$0] }
  }

  @Test func readsTheKeysAndTheDowngradeSwitch() throws {
    let policy = try Self.policy(
      """
      [trust]
      keys = ["/keys/release.pub.pem", "/keys/backup.pub.pem", "/keys/release.pub.pem"]
      allow-downgrade = true
      """)
    #expect(policy.trustedKeys == [Self.release.publicKey, Self.backup.publicKey])
    #expect(policy.allowDowngrade)
    #expect(policy.requiresSignature)
  }

  @Test func withoutTheSectionNothingIsRequiredAndDowngradesAreRefused() throws {
    // [SEC-SIG-6]
    let policy = try Self.policy("")
    #expect(policy.trustedKeys.isEmpty && !policy.requiresSignature && !policy.allowDowngrade)
  }

  @Test func badKeyFilesStopTheDaemonWithTheirName() throws {
    // [SEC-CHECK-15] [SEC-SIG-5] [SEC-ATK-36]
    let cases: [(file: String, says: String)] = [
      ("/keys/missing.pem", "cannot read /keys/missing.pem"),
      ("/keys/release.pem", "/keys/release.pem holds a private key"),
      ("/keys/garbage.pem", "/keys/garbage.pem: malformed key"),
      ("/keys/notes.txt", "/keys/notes.txt: not a PEM key"),
      ("/keys/both.pem", "/keys/both.pem holds a private key"),
      ("/keys/two-public.pem", "/keys/two-public.pem holds 2 PEM blocks"),
    ]
    for (file, says) in cases {
      #expect {
        try Self.policy("[trust]\nkeys = [\"\(file)\"]")
      } throws: { error in
        String(describing: error).contains(says)
      }
    }
  }

  @Test func badValuesAreErrorsThatNameTheKey() {
    // [SEC-CHECK-15]
    for (toml, says) in [
      ("[trust]\nkeys = \"/keys/release.pub.pem\"", "[trust] keys must be a list"),
      ("[trust]\nkeys = [1]", "[trust] keys must hold file paths"),
      ("[trust]\nallow-downgrade = \"yes\"", "[trust] allow-downgrade must be true or false"),
      ("[trust]\nkey = []", "unknown key 'key' in [trust]"),
    ] {
      #expect {
        try DaemonConfiguration(toml: toml)
      } throws: { error in
        String(describing: error).contains(says)
      }
    }
  }

  // MARK: - The decryption key

  static let device = try! ImageDecryptionKey.generate(.x25519)
  static let keyFiles: [String: (text: String, permissions: UInt32)] = [
    "/keys/device.pem": (device.pem, 0o600),
    "/keys/device-readable.pem": (device.pem, 0o644),
    "/keys/device-group.pem": (device.pem, 0o640),
    "/keys/device.pub.pem": (device.encryptionKey.pem, 0o600),
    "/keys/signing.pem": (release.pem, 0o600),
  ]

  static func decryptionPolicy(_ path: String) throws -> ImagePolicy {
    try DaemonConfiguration(toml: "[trust]\ndecryption-key = \"\(path)\"").trust.imagePolicy(
      readKeyFile: { keyFiles[$0] })
  }

  @Test func theDecryptionKeyIsReadFromAFileOnlyItsOwnerMayRead() throws {
    // [SEC-ENC-2]
    #expect(try Self.decryptionPolicy("/keys/device.pem").decryptionKey == Self.device)
    let cases: [(file: String, says: String)] = [
      (
        "/keys/device-readable.pem",
        "has mode 644; a private key must be readable by its owner only: chmod 600"
      ),
      ("/keys/device-group.pem", "has mode 640"),
      ("/keys/device.pub.pem", "this is a public key"),
      ("/keys/signing.pem", "Ed25519, a signing key"),
      ("/keys/missing.pem", "cannot read /keys/missing.pem"),
    ]
    for (file, says) in cases {
      #expect {
        try Self.decryptionPolicy(file)
      } throws: { error in
        String(describing: error).contains(says)
          && String(describing: error).contains("[trust] decryption-key")
      }
    }
    #expect(try Self.policy("").decryptionKey == nil)
  }
}
