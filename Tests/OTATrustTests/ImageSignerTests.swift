import Crypto
import OTATestSupport
import OTATrust
import OTAWire
import Testing

@Suite("Signing existing MCUboot images")
struct ImageSignerTests {
  static let builder = MCUbootImageBuilder(
    version: Version(major: 3, minor: 1, revision: 0, build: 2), securityCounter: .value(5))
  static let payload = SeededGenerator.bytes(3000, seed: 2)

  @Test func keepsHeaderPayloadAndProtectedTLVsAndReplacesTheSignature() throws {
    let first = ImageSigningKey.generate(.ed25519)
    let second = ImageSigningKey.generate(.ecdsaP256)
    let original = try Self.builder.build(payload: Self.payload, signingKey: first)
    let resigned = try MCUbootImageSigner.sign(original, with: second)
    let layout = try MCUbootImageLayout(parsing: resigned)
    let hashedLength = Int(layout.header.hashedLength)
    #expect(resigned[0..<hashedLength] == original[0..<hashedLength])
    #expect(layout.unprotectedTLVs.map(\.type) == [.sha256, .keyHash, .ecdsaSignature])
    #expect(layout.unprotectedTLVs[1].value == second.publicKey.keyHash)
    let digest = SHA256.hash(data: resigned[0..<hashedLength])
    #expect(
      ImageSignatureCheck.check(layout, digest: digest, trusted: [first.publicKey, second.publicKey])
        == .verified(second.publicKey))
    #expect(
      ImageSignatureCheck.check(layout, digest: digest, trusted: [first.publicKey])
        == .rejected("signed by a key this device does not trust (key hash \(second.publicKey.shortID))"))
  }

  @Test func signsAnUnsignedImageAndMatchesBuildingItSigned() throws {
    let key = ImageSigningKey.generate(.ed25519)
    let unsigned = try Self.builder.build(payload: Self.payload)
    // Ed25519 is deterministic: signing afterwards gives the very bytes of signing while building.
    #expect(
      try MCUbootImageSigner.sign(unsigned, with: key)
        == Self.builder.build(payload: Self.payload, signingKey: key))
    #expect(
      try MCUbootImageSigner.sign(unsigned, with: key, publicKeyFormat: .full)
        == MCUbootImageBuilder(
          version: Self.builder.version, securityCounter: .value(5), publicKeyFormat: .full
        ).build(payload: Self.payload, signingKey: key))
  }

  @Test func keepsOtherUnprotectedTLVsAfterTheNewSignature() throws {
    let vendor = MCUbootTLV(type: MCUbootTLVType(rawValue: 0x00a5), value: [1, 2, 3])
    let old = ImageSigningKey.generate(.ecdsaP256)
    let image = try replacingUnprotectedTLVs(Self.builder.build(payload: Self.payload, signingKey: old)) {
      [$0[0], vendor] + $0[1...]
    }
    let key = ImageSigningKey.generate(.ed25519)
    let tlvs = try MCUbootImageLayout(parsing: MCUbootImageSigner.sign(image, with: key)).unprotectedTLVs
    #expect(tlvs.map(\.type) == [.sha256, .keyHash, .ed25519, vendor.type])
    #expect(tlvs[3] == vendor)
  }

  @Test func refusesARawPayload() {
    #expect(
      throws: ImageError.notMCUboot(
        "it does not start with the magic 0x96f3b83d; wrap a raw payload with `otactl image create`")
    ) { try MCUbootImageSigner.sign(Self.payload, with: ImageSigningKey.generate(.ed25519)) }
    #expect(throws: ImageError.self) {
      try MCUbootImageSigner.sign([], with: ImageSigningKey.generate(.ed25519))
    }
  }

  @Test func refusesAnImageWhoseHashDoesNotMatch() throws {
    var image = try Self.builder.build(payload: Self.payload)
    image[0x200 + 10] ^= 0x40
    let error = #expect(throws: ImageError.self) {
      try MCUbootImageSigner.sign(image, with: ImageSigningKey.generate(.ed25519))
    }
    guard case .hashMismatch(let type, _, _) = error else {
      Issue.record("expected hashMismatch, got \(String(describing: error))")
      return
    }
    #expect(type == .sha256)
    #expect("\(error!)".hasSuffix("it was changed after it was made; refusing to sign it"))
  }

  @Test func refusesBytesAfterTheTLVsAndEncryptedAndMalformedImages() throws {
    let key = ImageSigningKey.generate(.ed25519)
    let image = try Self.builder.build(payload: Self.payload)
    #expect(throws: ImageError.trailingBytes(16)) {
      try MCUbootImageSigner.sign(image + [UInt8](repeating: 0xff, count: 16), with: key)
    }
    var encrypted = image
    encrypted[16] = 0x04  // IMAGE_F_ENCRYPTED_AES128
    #expect(throws: ImageError.encrypted) { try MCUbootImageSigner.sign(encrypted, with: key) }
    #expect(
      throws: ImageError.malformed(
        "MCUboot image is 600 bytes but its header puts the TLV areas at offset 3512 (hdr_size 512 + img_size 3000)"
      )
    ) { try MCUbootImageSigner.sign(Array(image.prefix(600)), with: key) }
  }
}
