import Crypto
import OTATestSupport
import OTAWire
import Testing

@testable import OTATrust

@Suite("Making MCUboot images")
struct ImageBuilderTests {
  static let version = Version(major: 1, minor: 2, revision: 3, build: 4)
  static let payload = SeededGenerator.bytes(1000, seed: 1)

  @Test func anUnsignedImageIsHeaderFillPayloadAndSHA256() throws {
    let image = try MCUbootImageBuilder(version: Self.version).build(payload: Self.payload)
    #expect(
      Array(image[0..<32]) == [
        0x3d, 0xb8, 0xf3, 0x96,  // magic
        0x00, 0x00, 0x00, 0x00,  // load_addr 0
        0x00, 0x02,  // hdr_size 0x200, the default
        0x00, 0x00,  // protect_tlv_size 0: no protected area
        0xe8, 0x03, 0x00, 0x00,  // img_size 1000
        0x00, 0x00, 0x00, 0x00,  // flags none
        0x01, 0x02, 0x03, 0x00, 0x04, 0x00, 0x00, 0x00,  // version 1.2.3+4
        0x00, 0x00, 0x00, 0x00,  // pad
      ])
    #expect(image[32..<0x200].allSatisfy { $0 == 0xff }, "imgtool fills the header with its erased value")
    #expect(Array(image[0x200..<0x200 + 1000]) == Self.payload)
    let digest = Array(SHA256.hash(data: image[0..<0x200 + 1000]))
    #expect(Array(image[(0x200 + 1000)...]) == [0x07, 0x69, 0x28, 0x00, 0x10, 0x00, 0x20, 0x00] + digest)
  }

  @Test func aSecurityCounterIsAProtectedSEC_CNT() throws {
    var builder = MCUbootImageBuilder(
      version: Self.version, headerSize: 32, securityCounter: .value(0x0102_0304))
    var layout = try MCUbootImageLayout(parsing: builder.build(payload: Self.payload))
    #expect(layout.header.protectedTLVSize == 12)
    #expect(layout.protectedTLVs == [MCUbootTLV(type: .securityCounter, value: [0x04, 0x03, 0x02, 0x01])])

    builder.securityCounter = .fromVersion
    layout = try MCUbootImageLayout(parsing: builder.build(payload: Self.payload))
    // (1 << 24) | (2 << 16) | 3, little-endian; the build number is not part of it.
    #expect(layout.protectedTLVs == [MCUbootTLV(type: .securityCounter, value: [0x03, 0x00, 0x02, 0x01])])
    #expect(
      SecurityCounter.fromVersion.resolved(for: Version(major: 255, minor: 255, revision: 65535))
        == 0xffff_ffff)
  }

  @Test(arguments: SigningAlgorithm.allCases)
  func aSignedImageCarriesKeyHashAndASignatureOfTheDigest(_ algorithm: SigningAlgorithm) throws {
    let key = ImageSigningKey.generate(algorithm)
    let image = try MCUbootImageBuilder(version: Self.version, securityCounter: .value(9))
      .build(payload: Self.payload, signingKey: key)
    let layout = try MCUbootImageLayout(parsing: image)
    #expect(layout.totalLength == UInt64(image.count))
    let tlvs = layout.unprotectedTLVs
    #expect(tlvs.map(\.type) == [.sha256, .keyHash, algorithm.signatureTLV])
    let digest = SHA256.hash(data: image[0..<Int(layout.header.hashedLength)])
    #expect(tlvs[0].value == Array(digest))
    #expect(tlvs[1].value == key.publicKey.keyHash)
    #expect(key.publicKey.isValidSignature(tlvs[2].value, digest: digest))
    #expect(
      ImageSignatureCheck.check(layout, digest: digest, trusted: [key.publicKey]) == .verified(key.publicKey))
  }

  @Test func theFullPublicKeyFormatWritesPUBKEY() throws {
    let key = ImageSigningKey.generate(.ecdsaP256)
    let image = try MCUbootImageBuilder(version: Self.version, publicKeyFormat: .full)
      .build(payload: Self.payload, signingKey: key)
    let layout = try MCUbootImageLayout(parsing: image)
    #expect(layout.unprotectedTLVs.map(\.type) == [.sha256, .publicKey, .ecdsaSignature])
    #expect(layout.unprotectedTLVs[1].value == key.publicKey.der)
  }

  @Test func aLoadAddressSetsRAM_LOADAsImgtoolDoes() throws {
    let image = try MCUbootImageBuilder(version: Self.version, loadAddress: 0x2000_0000).build(payload: [
      1, 2, 3,
    ])
    let header = try MCUbootImageLayout(parsing: image).header
    #expect(header.loadAddress == 0x2000_0000)
    #expect(header.flags == .ramLoad)
  }

  @Test func theSmallestHeaderAndAnEmptyPayloadAndAZeroFill() throws {
    let image = try MCUbootImageBuilder(version: Self.version, headerSize: 32).build(payload: [])
    let layout = try MCUbootImageLayout(parsing: image)
    #expect(layout.payloadRange == 32..<32)
    #expect(image.count == 32 + 40)
    let zeroFilled = try MCUbootImageBuilder(version: Self.version, headerSize: 64, headerFill: 0).build(
      payload: [7])
    #expect(zeroFilled[32..<64].allSatisfy { $0 == 0 })
  }

  @Test func sizesThatCannotBeEncodedAreRefused() throws {
    #expect(throws: ImageError.headerSizeTooSmall(31)) {
      try MCUbootImageBuilder(version: Self.version, headerSize: 31).build(payload: [1])
    }
    #expect(throws: ImageError.headerSizeTooLarge(0x10000)) {
      try MCUbootImageBuilder(version: Self.version, headerSize: 0x10000).build(payload: [1])
    }
    let largest = try MCUbootImageBuilder(version: Self.version, headerSize: 0xffff).build(payload: [1])
    #expect(try MCUbootImageLayout(parsing: largest).header.headerSize == 0xffff)

    // Without allocating 4 GiB: the size checks alone.
    let builder = MCUbootImageBuilder(version: Self.version)
    #expect(throws: ImageError.payloadTooLarge(Int(UInt32.max) + 1)) {
      try builder.makeHeader(payloadCount: Int(UInt32.max) + 1, protectedTLVSize: 0)
    }
    #expect(throws: ImageError.imageTooLarge(UInt64(UInt32.max) + 0x200 + 12)) {
      try builder.makeHeader(payloadCount: Int(UInt32.max), protectedTLVSize: 12)
    }
    let fits = try builder.makeHeader(payloadCount: Int(UInt32.max) - 0x200, protectedTLVSize: 0)
    #expect(fits.hashedLength == UInt64(UInt32.max))
  }

  @Test func errorsReadAsOneLine() {
    #expect(
      "\(ImageError.headerSizeTooSmall(16))"
        == "header size 16 is too small: it must hold the 32-byte MCUboot header")
    #expect(
      "\(ImageError.headerSizeTooLarge(70000))"
        == "header size 70000 is too large: MCUboot's hdr_size field holds at most 65535 (0xffff)")
    #expect("\(ImageError.payloadTooLarge(5_000_000_000))".contains("at most 4294967295"))
  }

  @Test func numbersAndCountersParseAsImgtoolTakesThem() {
    #expect(NumberText.unsigned("0x200") == 512)
    #expect(NumberText.unsigned("0X1F") == 31)
    #expect(NumberText.unsigned("512") == 512)
    #expect(NumberText.unsigned("0o17") == 15)
    #expect(NumberText.unsigned("0b101") == 5)
    for bad in ["", "0x", "-1", "+5", "12a", "0xg", " 1"] {
      #expect(NumberText.unsigned(bad) == nil, "\(bad)")
    }
    #expect(SecurityCounter(text: "auto") == .fromVersion)
    #expect(SecurityCounter(text: "AUTO") == .fromVersion)
    #expect(SecurityCounter(text: "0x10") == .value(16))
    #expect(SecurityCounter(text: "4294967295") == .value(UInt32.max))
    #expect(SecurityCounter(text: "4294967296") == nil)
  }
}
