import Crypto
import OTATestSupport
import OTAWire
import Testing

@testable import OTATrust

/// `ImageSignatureCheck`, the device's decision, on images made here and by hand: the exact verdicts.
@Suite("Image signature check")
struct SignatureCheckTests {
  static let ed25519 = ImageSigningKey.generate(.ed25519)
  static let p256 = ImageSigningKey.generate(.ecdsaP256)
  static let builder = MCUbootImageBuilder(
    version: Version(major: 2, minor: 0, revision: 1), headerSize: 0x80, securityCounter: .value(4))
  static let payload = SeededGenerator.bytes(2048, seed: 3)

  static func key(_ algorithm: SigningAlgorithm) -> ImageSigningKey {
    algorithm == .ed25519 ? ed25519 : p256
  }

  /// The verdict for `image` as the device reaches it: hash first, then the signature.
  func verdict(_ image: [UInt8], trusting keys: [ImagePublicKey]) throws -> ImageSignatureCheck.Verdict? {
    let layout = try MCUbootImageLayout(parsing: image)
    let hashed = image[0..<Int(layout.header.hashedLength)]
    guard layout.unprotectedArea.values(of: .sha256) == [Array(SHA256.hash(data: hashed))] else { return nil }
    return ImageSignatureCheck.check(layout, digest: SHA256.hash(data: hashed), trusted: keys)
  }

  func doesNotVerify(_ key: ImageSigningKey) -> ImageSignatureCheck.Verdict {
    .rejected("the \(key.algorithm.signatureTLV) signature does not verify with the \(key.publicKey)")
  }

  @Test(arguments: SigningAlgorithm.allCases)
  func aValidImageVerifiesWithItsKeyAmongOthers(_ algorithm: SigningAlgorithm) throws {
    // [SEC-SIG-2]
    let key = Self.key(algorithm)
    let image = try Self.builder.build(payload: Self.payload, signingKey: key)
    let other = ImageSigningKey.generate(.ed25519).publicKey
    #expect(try verdict(image, trusting: [key.publicKey]) == .verified(key.publicKey))
    #expect(try verdict(image, trusting: [other, key.publicKey]) == .verified(key.publicKey))
  }

  @Test(arguments: SigningAlgorithm.allCases)
  func aWrongKeyIsAnUntrustedKey(_ algorithm: SigningAlgorithm) throws {
    // [SEC-SIG-3]
    let key = Self.key(algorithm)
    let image = try Self.builder.build(payload: Self.payload, signingKey: key)
    #expect(
      try verdict(image, trusting: [ImageSigningKey.generate(key.algorithm).publicKey])
        == .rejected("signed by a key this device does not trust (key hash \(key.publicKey.shortID))"))
    // With no keys at all, a signed image is refused for its key; an unsigned one for the empty list.
    #expect(
      try verdict(image, trusting: [])
        == .rejected("signed by a key this device does not trust (key hash \(key.publicKey.shortID))"))
    #expect(
      try verdict(Self.builder.build(payload: Self.payload), trusting: [])
        == .rejected("no trusted keys are configured"))
  }

  /// A flipped bit anywhere in the signed range, with the SHA256 TLV fixed up to match: only the
  /// signature can tell, and it does.
  @Test(arguments: [
    ("header: version", 20), ("header: load address", 4), ("header fill", 40), ("payload", 0x80 + 1000),
    ("protected SEC_CNT value", 0x80 + 2048 + 8),
  ])
  func aFlippedBitInTheSignedRangeBreaksTheSignature(place: String, offset: Int) throws {
    // [SEC-SIG-2]
    for key in [Self.ed25519, Self.p256] {
      var image = try Self.builder.build(payload: Self.payload, signingKey: key)
      image[offset] ^= 0x08
      #expect(
        try verdict(image, trusting: [key.publicKey]) == nil, "\(place): the old hash no longer matches")
      #expect(try verdict(rehashed(image), trusting: [key.publicKey]) == doesNotVerify(key), "\(place)")
    }
  }

  @Test(arguments: SigningAlgorithm.allCases)
  func aFlippedBitInTheSignatureBreaksIt(_ algorithm: SigningAlgorithm) throws {
    // [SEC-SIG-3]
    let key = Self.key(algorithm)
    var image = try Self.builder.build(payload: Self.payload, signingKey: key)
    image[image.count - 20] ^= 0x01
    #expect(try verdict(image, trusting: [key.publicKey]) == doesNotVerify(key))
  }

  @Test func aKeyHashOfAnUnknownKeyIsNamed() throws {
    // [SEC-SIG-3]
    let image = try replacingUnprotectedTLVs(
      Self.builder.build(payload: Self.payload, signingKey: Self.ed25519)
    ) {
      $0.map {
        $0.type == .keyHash ? MCUbootTLV(type: .keyHash, value: [UInt8](repeating: 0xab, count: 32)) : $0
      }
    }
    #expect(
      try verdict(image, trusting: [Self.ed25519.publicKey])
        == .rejected("signed by a key this device does not trust (key hash abababababababab)"))
  }

  @Test func aSignatureWithoutKeyHashIsRefused() throws {
    let image = try replacingUnprotectedTLVs(
      Self.builder.build(payload: Self.payload, signingKey: Self.ed25519)
    ) {
      $0.filter { $0.type != .keyHash }
    }
    #expect(
      try verdict(image, trusting: [Self.ed25519.publicKey])
        == .rejected("the ED25519 (0x24) signature has no KEYHASH or PUBKEY TLV before it naming its key"))
  }

  @Test func aSignatureOfTheWrongKindForItsKeyIsRefused() throws {
    let image = try assembleImage(payload: Self.payload) { digest in
      [
        MCUbootTLV(type: .sha256, value: Array(digest)),
        MCUbootTLV(type: .keyHash, value: Self.ed25519.publicKey.keyHash),
        MCUbootTLV(type: .ecdsaSignature, value: try Self.p256.sign(digest: digest)),
      ]
    }
    #expect(
      try verdict(image, trusting: [Self.ed25519.publicKey])
        == .rejected("a ECDSA_SIG (0x22) signature cannot come from the \(Self.ed25519.publicKey)"))
  }

  @Test func aPureSignatureIsRefused() throws {
    // [SEC-SIG-4]
    let image = try replacingUnprotectedTLVs(
      Self.builder.build(payload: Self.payload, signingKey: Self.ed25519)
    ) {
      $0 + [MCUbootTLV(type: .signaturePure, value: [1])]
    }
    #expect(
      try verdict(image, trusting: [Self.ed25519.publicKey])
        == .rejected(
          "the image has a pure signature (SIG_PURE), which is not supported; sign its SHA-256 digest (imgtool without --pure)"
        ))
  }

  /// imgtool --pad-sig appends zeros after the DER signature up to 72 bytes.
  @Test func aPaddedECDSASignatureVerifiesAndNonZeroPaddingDoesNot() throws {
    let image = try Self.builder.build(payload: Self.payload, signingKey: Self.p256)
    func padded(with byte: UInt8) throws -> [UInt8] {
      try replacingUnprotectedTLVs(image) {
        $0.map { tlv in
          guard tlv.type == .ecdsaSignature else { return tlv }
          return MCUbootTLV(
            type: tlv.type, value: tlv.value + [UInt8](repeating: byte, count: 72 - tlv.value.count))
        }
      }
    }
    let zeroPadded = try padded(with: 0)
    #expect(try unprotectedValue(zeroPadded, .ecdsaSignature)?.count == 72)
    if try unprotectedValue(image, .ecdsaSignature)!.count < 72 {
      #expect(try verdict(zeroPadded, trusting: [Self.p256.publicKey]) == .verified(Self.p256.publicKey))
      #expect(try verdict(padded(with: 1), trusting: [Self.p256.publicKey]) == doesNotVerify(Self.p256))
    }
    let twoZeros = try replacingUnprotectedTLVs(image) {
      $0.map { $0.type == .ecdsaSignature ? MCUbootTLV(type: $0.type, value: $0.value + [0, 0]) : $0 }
    }
    #expect(try verdict(twoZeros, trusting: [Self.p256.publicKey]) == .verified(Self.p256.publicKey))
  }

  @Test func keyAndSignatureTLVsInTheProtectedAreaAreRefused() throws {
    // [SEC-SIG-4]
    let key = Self.ed25519
    let image = try assembleImage(
      payload: Self.payload, protected: [MCUbootTLV(type: .keyHash, value: key.publicKey.keyHash)]
    ) { digest in
      [
        MCUbootTLV(type: .sha256, value: Array(digest)),
        MCUbootTLV(type: .keyHash, value: key.publicKey.keyHash),
        MCUbootTLV(type: .ed25519, value: try key.sign(digest: digest)),
      ]
    }
    #expect(
      try verdict(image, trusting: [key.publicKey])
        == .rejected("KEYHASH (0x01) sits in the protected TLV area; key and signature TLVs belong after it"))
    let signatureInside = try assembleImage(
      payload: Self.payload, protected: [MCUbootTLV(type: .ed25519, value: [UInt8](repeating: 0, count: 64))]
    ) { digest in [MCUbootTLV(type: .sha256, value: Array(digest))] }
    #expect(
      try verdict(signatureInside, trusting: [key.publicKey])
        == .rejected("ED25519 (0x24) sits in the protected TLV area; key and signature TLVs belong after it"))
  }

  @Test func aWholePublicKeyNamesTheKeyToo() throws {
    // [SEC-SIG-3]
    let image = try MCUbootImageBuilder(version: Self.builder.version, publicKeyFormat: .full)
      .build(payload: Self.payload, signingKey: Self.p256)
    #expect(try verdict(image, trusting: [Self.p256.publicKey]) == .verified(Self.p256.publicKey))
    #expect(
      try verdict(image, trusting: [Self.ed25519.publicKey])
        == .rejected("signed by a key this device does not trust (key hash \(Self.p256.publicKey.shortID))"))
  }

  @Test func anUnsignedImageOrAnUnsupportedSignatureIsRefused() throws {
    // [SEC-SIG-4]
    #expect(
      try verdict(Self.builder.build(payload: Self.payload), trusting: [Self.ed25519.publicKey])
        == .rejected("the image is not signed"))
    let rsa = try assembleImage(payload: Self.payload) { digest in
      [MCUbootTLV(type: .sha256, value: Array(digest)), MCUbootTLV(type: .rsa2048PSS, value: [1, 2, 3])]
    }
    #expect(
      try verdict(rsa, trusting: [Self.ed25519.publicKey])
        == .rejected("signed with RSA2048_PSS (0x20); only ED25519 and ECDSA_SIG (P-256) are checked"))
  }

  /// A second signature by a trusted key verifies even after one by an untrusted key.
  @Test func theFirstTrustedSignatureWins() throws {
    // [SEC-SIG-3]
    let stranger = ImageSigningKey.generate(.ed25519)
    let image = try assembleImage(payload: Self.payload) { digest in
      [
        MCUbootTLV(type: .sha256, value: Array(digest)),
        MCUbootTLV(type: .keyHash, value: stranger.publicKey.keyHash),
        MCUbootTLV(type: .ed25519, value: try stranger.sign(digest: digest)),
        MCUbootTLV(type: .keyHash, value: Self.p256.publicKey.keyHash),
        MCUbootTLV(type: .ecdsaSignature, value: try Self.p256.sign(digest: digest)),
      ]
    }
    #expect(try verdict(image, trusting: [Self.p256.publicKey]) == .verified(Self.p256.publicKey))
  }
}
