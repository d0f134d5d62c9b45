import OTAWire

/// What the device demands of an image beyond its integrity: whose signature it must carry and
/// whether it may be older than what runs. From otad's `[trust]` configuration.
public struct ImagePolicy: Sendable, Equatable {
  /// The keys an image must be signed by (any one of them). Empty: signatures are not required,
  /// and raw images are accepted.
  public var trustedKeys: [ImagePublicKey]
  /// Accept an image whose version is lower than the confirmed one. The security counter never
  /// goes backwards, whatever this says.
  public var allowDowngrade: Bool
  /// The device's private key for encrypted images (`[trust] decryption-key`); nil: an encrypted
  /// image is refused.
  public var decryptionKey: ImageDecryptionKey?

  public init(
    trustedKeys: [ImagePublicKey] = [], allowDowngrade: Bool = false, decryptionKey: ImageDecryptionKey? = nil
  ) {
    self.trustedKeys = trustedKeys
    self.allowDowngrade = allowDowngrade
    self.decryptionKey = decryptionKey
  }

  public var requiresSignature: Bool { !trustedKeys.isEmpty }

  /// Integrity only: any well-formed image, any version. For tools and tests.
  public static let integrityOnly = ImagePolicy(allowDowngrade: true)
}

/// What an update is compared against: the confirmed image's version and the device's security
/// counter floor (`BootState.securityFloor`).
public struct InstalledImage: Sendable, Equatable {
  public var version: Version
  public var securityFloor: UInt32

  public init(version: Version, securityFloor: UInt32 = 0) {
    self.version = version
    self.securityFloor = securityFloor
  }

  /// Nothing installed to compare against: every version and counter passes.
  public static let none = InstalledImage(version: .zero)
}
