import Crypto
import Foundation
import OTAChecksum
import OTATestSupport
import OTATrust
import OTAWire
import Testing

/// `ImageVerifier` against the real imgtool images in `Images/`, corruptions of them, raw images,
/// and drip-fed reads. Expected CRCs and digests come from outside the verifier: a bitwise CRC32
/// written here, Python's zlib (hard-coded, from Images/README.md), imgtool's own digest (from
/// `imgtool verify`), and SHA-256 computed here over the hashed range.
@Suite("Image verifier")
struct ImageVerifierTests {
  /// The MCUboot samples, with what imgtool says about them.
  struct Sample: Sendable, CustomTestStringConvertible {
    var name: String
    var version: Version
    /// `imgtool verify` prints it as "Image digest".
    var imgtoolDigest: String
    /// Its protected SEC_CNT TLV (imgtool --security-counter), 0 without one.
    var securityCounter: UInt32 = 0
    var testDescription: String { name }
  }

  static let samples = [
    Sample(
      name: "mcuboot-unsigned-4099B.bin", version: Version(major: 1, minor: 2, revision: 3, build: 4),
      imgtoolDigest: "86b5ef1b2c8e05c9c267e2a40fea9f8b727e13666ae59409fa1b52826a2ced01"),
    Sample(
      name: "mcuboot-ed25519-100KiB.bin", version: Version(major: 2, minor: 0, revision: 1, build: 7),
      imgtoolDigest: "b79e354ea339879bef35c59dbb6ef0f1073e3ccc15548d8f5a9aee0c1b6d1ae5", securityCounter: 3),
    Sample(
      name: "mcuboot-ecdsa-p256-1B.bin", version: Version(major: 0, minor: 9, revision: 0, build: 1),
      imgtoolDigest: "00725f821d0d07f201e5b19a285c9a93794f69748f0be43ec6b5f3aa1206bb17"),
  ]

  /// Raw payloads with their CRC32 as Python's `zlib.crc32` printed it.
  static let rawSamples: [(name: String, crc32: UInt32)] = [
    ("raw-1B.bin", 0xaf05_713c), ("raw-4099B.bin", 0x2023_7eba), ("raw-100KiB.bin", 0xdd43_7a9b),
    ("raw-1MiB.bin", 0xb9b1_b285),
  ]

  static let someVersion = Version(major: 7, minor: 7, revision: 7, build: 7)

  // MARK: - Valid images

  @Test(arguments: samples)
  func verifiesAnImgtoolImage(sample: Sample) throws {
    let image = try VerifierSampleImages.bytes(sample.name)
    let layout = try MCUbootImageLayout(parsing: image)
    let hashed = image[0..<Int(layout.hashedRange.upperBound)]
    let digest = Array(SHA256.hash(data: Data(hashed)))
    #expect(digest.hex == sample.imgtoolDigest)
    #expect(layout.unprotectedArea.values(of: .sha256) == [digest])

    let verdict = try verify(image, version: sample.version)
    #expect(
      verdict
        == .valid(
          ImageReport(
            kind: .mcuboot(layout), size: UInt64(image.count), crc32: referenceCRC32(image),
            version: sample.version, sha256: digest, securityCounter: sample.securityCounter)))
  }

  @Test func referenceCRCAgreesWithZlib() throws {
    #expect(referenceCRC32(Array("123456789".utf8)) == 0xcbf4_3926)
    #expect(referenceCRC32(try VerifierSampleImages.bytes("mcuboot-unsigned-4099B.bin")) == 0xbd87_bf37)
    #expect(referenceCRC32(try VerifierSampleImages.bytes("mcuboot-ed25519-100KiB.bin")) == 0x85b8_b921)
  }

  @Test(arguments: zip(rawSamples.map(\.name), rawSamples.map(\.crc32)))
  func verifiesARawImage(name: String, crc32: UInt32) throws {
    let image = try VerifierSampleImages.bytes(name)
    let verdict = try verify(image, crc: crc32, version: Self.someVersion)
    #expect(
      verdict
        == .valid(
          ImageReport(
            kind: .raw, size: UInt64(image.count), crc32: crc32, version: Self.someVersion, sha256: nil)
        ))
  }

  @Test func ignoresSlotBytesPastTheImage() throws {
    let image = try VerifierSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    let slot = SliceSlotReader(image + [UInt8](repeating: 0xff, count: 10_000))
    let verdict = try ImageVerifier.verify(
      reader: slot, size: UInt64(image.count), expectedCRC: referenceCRC32(image),
      preparedVersion: Self.samples[0].version)
    guard case .valid = verdict else {
      Issue.record("expected valid, got \(verdict)")
      return
    }
  }

  // MARK: - Drip-feed: chunk size changes nothing

  @Test(arguments: samples.map(\.name), [1, 7, 4096])
  func givesTheSameVerdictForAnyChunkSize(name: String, chunkSize: Int) throws {
    let image = try VerifierSampleImages.bytes(name)
    let version = try MCUbootImageLayout(parsing: image).header.version
    let reference = try verify(image, version: version)
    #expect(try verify(image, version: version, chunkSize: chunkSize) == reference)

    // Corrupt images too: the hash window must be cut the same way at every chunk size.
    var corrupt = image
    corrupt[corrupt.count / 2] ^= 0x10
    #expect(
      try verify(corrupt, version: version, chunkSize: chunkSize) == verify(corrupt, version: version))
  }

  @Test func dripFeedsALargeRawImage() throws {
    let image = try VerifierSampleImages.bytes("raw-1MiB.bin")
    for chunkSize in [7, 65_536, 1 << 20, 3 << 20] {
      guard
        case .valid(let report) = try verify(image, crc: 0xb9b1_b285, version: .zero, chunkSize: chunkSize)
      else {
        Issue.record("chunk size \(chunkSize): not valid")
        continue
      }
      #expect(report.crc32 == 0xb9b1_b285)
    }
  }

  @Test func treatsANonPositiveChunkSizeAsOne() throws {
    let image = try VerifierSampleImages.bytes("mcuboot-ecdsa-p256-1B.bin")
    let version = Version(major: 0, minor: 9, revision: 0, build: 1)
    #expect(try verify(image, version: version, chunkSize: 0) == verify(image, version: version))
    #expect(try verify(image, version: version, chunkSize: -5) == verify(image, version: version))
  }

  // MARK: - Corruptions

  @Test(arguments: samples)
  func refusesAFlippedPayloadBit(sample: Sample) throws {
    // [SEC-SIG-6]
    var image = try VerifierSampleImages.bytes(sample.name)
    let layout = try MCUbootImageLayout(parsing: image)
    image[Int(layout.payloadRange.upperBound) - 1] ^= 0x01
    #expect(try verify(image, version: sample.version) == .invalid(.hashMismatch))
  }

  @Test(arguments: samples)
  func refusesAFlippedSHA256TLVBit(sample: Sample) throws {
    // [SEC-SIG-2]
    var image = try VerifierSampleImages.bytes(sample.name)
    let layout = try MCUbootImageLayout(parsing: image)
    // The SHA256 TLV is the first of the unprotected area: info header 4, TLV header 4.
    image[Int(layout.unprotectedTLVRange.lowerBound) + 8 + 31] ^= 0x80
    #expect(try verify(image, version: sample.version) == .invalid(.hashMismatch))
  }

  @Test func refusesAFlippedProtectedTLVBit() throws {
    var image = try VerifierSampleImages.bytes("mcuboot-ed25519-100KiB.bin")
    let layout = try MCUbootImageLayout(parsing: image)
    image[Int(layout.protectedTLVRange.upperBound) - 1] ^= 0x01  // the security counter's top byte
    #expect(try verify(image, version: Self.samples[1].version) == .invalid(.hashMismatch))
  }

  /// Every bit of the fixed header after the magic, flipped: never valid; a version or flag change
  /// is caught by the hash, a size change by the structure checks.
  @Test(arguments: samples)
  func refusesEveryFlippedHeaderBit(sample: Sample) throws {
    let image = try VerifierSampleImages.bytes(sample.name)
    for bit in 32..<(MCUbootHeader.byteCount * 8) {
      var corrupt = image
      corrupt[bit / 8] ^= 1 << UInt8(bit % 8)
      switch try verify(corrupt, version: sample.version) {
      case .invalid(.hashMismatch), .invalid(.malformed), .invalid(.sizeMismatch): break
      case let other: Issue.record("bit \(bit): \(other)")
      }
    }
  }

  /// Without its magic an image is raw by definition: opaque bytes that only the CRC vouches for.
  /// (The CRC here is the corrupted image's own, as a sender that built it so would announce.)
  @Test(arguments: samples)
  func treatsAnImageWithAFlippedMagicBitAsRaw(sample: Sample) throws {
    let image = try VerifierSampleImages.bytes(sample.name)
    for bit in 0..<32 {
      var corrupt = image
      corrupt[bit / 8] ^= 1 << UInt8(bit % 8)
      guard case .valid(let report) = try verify(corrupt, version: sample.version), report.kind == .raw else {
        Issue.record("bit \(bit): not a valid raw image")
        continue
      }
    }
  }

  @Test func refusesAFlippedHeaderPaddingBit() throws {
    var image = try VerifierSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    image[0x100] ^= 0x01  // between the 32-byte header and hdr_size 0x200: hashed, not decoded
    #expect(try verify(image, version: Self.samples[0].version) == .invalid(.hashMismatch))
  }

  @Test func refusesAVersionFieldChange() throws {
    var image = try VerifierSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    image[20] = 9  // major 1 → 9; the prepared version follows, so only the hash can object
    #expect(
      try verify(image, version: Version(major: 9, minor: 2, revision: 3, build: 4))
        == .invalid(.hashMismatch))
  }

  @Test func refusesAMalformedHeader() throws {
    var image = try VerifierSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    image[8] = 0x10
    image[9] = 0x00  // hdr_size 16
    guard case .invalid(.malformed(let message)) = try verify(image, version: Self.samples[0].version) else {
      Issue.record("expected malformed")
      return
    }
    #expect(message.contains("hdr_size is 16"))
  }

  @Test(arguments: [4, 31, 32, 33, 4650])
  func refusesATruncatedImage(length: Int) throws {
    let image = Array(try VerifierSampleImages.bytes("mcuboot-unsigned-4099B.bin").prefix(length))
    let verdict = try verify(image, version: Self.samples[0].version)
    switch verdict {
    case .invalid(.malformed), .invalid(.sizeMismatch): break
    default: Issue.record("length \(length): \(verdict)")
    }
  }

  @Test func refusesTrailingBytesInsideTheReceivedSize() throws {
    // [SEC-LIMIT-1]
    let image = try VerifierSampleImages.bytes("mcuboot-unsigned-4099B.bin") + [1, 2, 3]
    #expect(
      try verify(image, version: Self.samples[0].version)
        == .invalid(.sizeMismatch(described: UInt64(image.count - 3), received: UInt64(image.count))))
  }

  @Test func refusesAnEmptyImage() throws {
    guard case .invalid(.malformed) = try verify([], version: .zero) else {
      Issue.record("expected malformed")
      return
    }
  }

  // MARK: - Prepared CRC and version

  @Test(arguments: samples)
  func refusesAWrongPreparedCRC(sample: Sample) throws {
    let image = try VerifierSampleImages.bytes(sample.name)
    let actual = referenceCRC32(image)
    let verdict = try verify(image, crc: actual ^ 1, version: sample.version)
    #expect(verdict == .invalid(.crcMismatch(expected: actual ^ 1, actual: actual)))
    #expect(ImageProblem.crcMismatch(expected: actual ^ 1, actual: actual).status == .crcMismatch)
  }

  @Test func reportsACRCMismatchBeforeAnythingElse() throws {
    var image = try VerifierSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    let original = referenceCRC32(image)
    image[0] ^= 0xff  // no longer MCUboot at all
    guard case .invalid(.crcMismatch(original, _)) = try verify(image, crc: original, version: .zero) else {
      Issue.record("expected a CRC mismatch")
      return
    }
  }

  @Test func refusesARawImageWithAWrongCRC() throws {
    let image = try VerifierSampleImages.bytes("raw-4099B.bin")
    #expect(
      try verify(image, crc: 0x2023_7ebb, version: .zero)
        == .invalid(.crcMismatch(expected: 0x2023_7ebb, actual: 0x2023_7eba)))
  }

  @Test(arguments: samples)
  func refusesAWrongPreparedVersion(sample: Sample) throws {
    // [SEC-CHECK-11]
    let image = try VerifierSampleImages.bytes(sample.name)
    var prepared = sample.version
    prepared.build += 1
    let verdict = try verify(image, version: prepared)
    #expect(verdict == .invalid(.versionMismatch(header: sample.version, prepared: prepared)))
    #expect(
      ImageProblem.versionMismatch(header: sample.version, prepared: prepared).status == .validationFailed)
  }

  // MARK: - Hash TLV rules, on images built with the encoders

  @Test func refusesAnImageWithoutSHA256TLV() throws {
    let image = try buildImage(unprotected: [
      MCUbootTLV(type: .keyHash, value: [UInt8](repeating: 1, count: 32))
    ])
    #expect(try verify(image, version: .zero) == .invalid(.hashMissing))
    #expect(ImageProblem.hashMissing.status == .validationFailed)
  }

  @Test func refusesASHA256TLVOfTheWrongLength() throws {
    let image = try buildImage(unprotected: [
      MCUbootTLV(type: .sha256, value: [UInt8](repeating: 0, count: 31))
    ])
    guard case .invalid(.malformed(let message)) = try verify(image, version: .zero) else {
      Issue.record("expected malformed")
      return
    }
    #expect(message.contains("31 bytes"))
  }

  @Test func refusesTwoSHA256TLVs() throws {
    let image = try buildImage(withHash: true, extraHash: true)
    guard case .invalid(.malformed(let message)) = try verify(image, version: .zero) else {
      Issue.record("expected malformed")
      return
    }
    #expect(message.contains("2 SHA256 TLVs"))
  }

  @Test func verifiesAnImageBuiltWithTheEncoders() throws {
    let image = try buildImage(withHash: true)
    guard case .valid(let report) = try verify(image, version: .zero) else {
      Issue.record("expected valid")
      return
    }
    #expect(report.sha256?.count == 32)
  }

  @Test func refusesAnSHA512HashedImageWithAReason() throws {
    let image = try buildImage(unprotected: [
      MCUbootTLV(type: .sha512, value: [UInt8](repeating: 0, count: 64))
    ])
    guard case .invalid(.malformed(let message)) = try verify(image, version: .zero) else {
      Issue.record("expected malformed")
      return
    }
    #expect(message.contains("SHA512"))
  }

  @Test func refusesAnEncryptedImageWithoutADecryptionKey() throws {
    // [SEC-SIG-4]
    let image = try buildImage(withHash: true, flags: .encryptedAES128)
    guard
      case .invalid(.cannotDecrypt(let message)) = try verify(
        image, version: .zero, payload: .asSent(key: nil, plaintextBelow: 0))
    else {
      Issue.record("expected cannotDecrypt")
      return
    }
    #expect(message.contains("encrypted") && message.contains("no decryption key"))
    // As stored (MCUboot's primary slot: the payload already plaintext), it is hashed as it lies.
    #expect(try verify(image, version: .zero, payload: .asStored).isValid)
  }

  // MARK: - Reads

  /// The header and TLV areas decoded first must be the bytes that get hashed: a slot that answers
  /// the header read with one version and the stream with another is refused.
  @Test func refusesASlotThatChangesBetweenReads() throws {
    let image = try VerifierSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    var forged = image
    forged[20] = 9  // what the header read sees: major 9
    let slot = TwoFacedSlotReader(streamed: image, headerRead: Array(forged.prefix(MCUbootHeader.byteCount)))
    let verdict = try ImageVerifier.verify(
      reader: slot, size: UInt64(image.count), expectedCRC: referenceCRC32(image),
      preparedVersion: Version(major: 9, minor: 2, revision: 3, build: 4), chunkSize: 4096)
    guard case .invalid(.malformed(let message)) = verdict else {
      Issue.record("expected malformed, got \(verdict)")
      return
    }
    #expect(message.contains("changed"))
  }

  @Test func passesReadErrorsThrough() throws {
    let slot = SliceSlotReader([1, 2, 3])
    #expect(throws: SliceReadError.outOfBounds(offset: 0, count: 4, capacity: 3)) {
      try ImageVerifier.verify(reader: slot, size: 4, expectedCRC: 0, preparedVersion: .zero)
    }
  }

  @Test func refusesASourceThatReturnsFewerBytesThanAsked() throws {
    let image = try VerifierSampleImages.bytes("raw-4099B.bin")
    let verdict = try ImageVerifier.verify(
      reader: ShortReadingSource(bytes: image, shortFrom: 1024), size: UInt64(image.count),
      expectedCRC: referenceCRC32(image), preparedVersion: Self.someVersion, chunkSize: 1024)
    #expect(verdict == .invalid(.malformed("the slot returned fewer bytes than asked at offset 1024")))
  }

  // MARK: - Helpers

  private func verify(
    _ image: [UInt8], crc: UInt32? = nil, version: Version, policy: ImagePolicy = .integrityOnly,
    installed: InstalledImage = .none, payload: PayloadView = .asStored, chunkSize: Int = 1 << 20
  ) throws -> ImageVerdict {
    // Reads may be one chunk, the 32-byte header, or the TLV areas (at most 2 * 65535 bytes).
    let limit = max(chunkSize, MCUbootHeader.byteCount, MCUbootImageLayout.maximumTLVAreasLength)
    return try ImageVerifier.verify(
      reader: SliceSlotReader(image, largestRead: limit), size: UInt64(image.count),
      expectedCRC: crc ?? CRC32.checksum(image), preparedVersion: version, policy: policy,
      installed: installed, payload: payload, chunkSize: chunkSize)
  }

  // MARK: - Trust: imgtool's signatures, downgrades, security counters

  static func testKey(_ name: String) throws -> ImagePublicKey {
    try ImagePublicKey(
      pem: String(decoding: try VerifierSampleImages.bytes("keys/\(name).pub.pem"), as: UTF8.self))
  }

  @Test func imgtoolSignaturesVerifyWithTheirKeys() throws {
    // [SEC-SIG-2]
    let ed25519 = try Self.testKey("test-ed25519")
    let p256 = try Self.testKey("test-ecdsa-p256")
    let trusted = ImagePolicy(trustedKeys: [p256, ed25519])
    for (name, version, key) in [
      ("mcuboot-ed25519-100KiB.bin", Self.samples[1].version, ed25519),
      ("mcuboot-ecdsa-p256-1B.bin", Self.samples[2].version, p256),
    ] {
      let verdict = try verify(try VerifierSampleImages.bytes(name), version: version, policy: trusted)
      guard case .valid(let report) = verdict else {
        Issue.record("\(name): \(verdict)")
        continue
      }
      #expect(report.signedBy == key)
    }
  }

  @Test func signaturesAreRequiredOnceKeysAreTrusted() throws {
    // [SEC-SIG-1] [SEC-SIG-3]
    let onlyP256 = ImagePolicy(trustedKeys: [try Self.testKey("test-ecdsa-p256")])
    let ed25519Image = try VerifierSampleImages.bytes("mcuboot-ed25519-100KiB.bin")
    guard
      case .invalid(.signatureInvalid(let reason)) = try verify(
        ed25519Image, version: Self.samples[1].version, policy: onlyP256)
    else { Issue.record("an image signed by another key passed"); return }
    #expect(reason.contains("does not trust"))
    let unsigned = try VerifierSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    #expect(
      try verify(unsigned, version: Self.samples[0].version, policy: onlyP256)
        == .invalid(.signatureInvalid("the image is not signed")))
    let raw = try VerifierSampleImages.bytes("raw-4099B.bin")
    guard case .invalid(let problem) = try verify(raw, version: Self.samples[0].version, policy: onlyP256)
    else {
      Issue.record("a raw image passed with keys configured"); return
    }
    #expect(problem.status == .signatureInvalid)
  }

  @Test func versionsAndSecurityCountersAreComparedWithTheInstalledImage() throws {
    // [SEC-DOWN-1] [SEC-DOWN-2]
    let image = try VerifierSampleImages.bytes("mcuboot-ed25519-100KiB.bin")  // 2.0.1+7, SEC_CNT 3
    let version = Self.samples[1].version
    let newer = InstalledImage(version: Version(major: 2, minor: 0, revision: 2), securityFloor: 0)
    #expect(
      try verify(image, version: version, policy: ImagePolicy(), installed: newer)
        == .invalid(.downgrade(image: version, installed: newer.version)))
    #expect(
      try verify(image, version: version, policy: ImagePolicy(allowDowngrade: true), installed: newer).isValid
    )
    #expect(
      try verify(image, version: version, policy: ImagePolicy(), installed: InstalledImage(version: version))
        .isValid)
    let floor4 = InstalledImage(version: .zero, securityFloor: 4)
    #expect(
      try verify(image, version: version, policy: ImagePolicy(allowDowngrade: true), installed: floor4)
        == .invalid(.securityCounterBackwards(image: 3, floor: 4)))
    #expect(
      try verify(image, version: version, installed: InstalledImage(version: .zero, securityFloor: 3)).isValid
    )
  }

  @Test func aSecurityCounterOutsideTheSignedAreaIsMalformed() throws {
    // [SEC-SIG-4]
    let image = try VerifierSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    let layout = try MCUbootImageLayout(parsing: image)
    var counter: [UInt8] = []
    counter.appendU32(1)
    let moved = try MCUbootImageLayout(
      header: layout.header, protectedArea: nil,
      unprotectedArea: MCUbootTLVArea(
        kind: .unprotected,
        entries: layout.unprotectedTLVs + [MCUbootTLV(type: .securityCounter, value: counter)]))
    var bytes = Array(image[0..<Int(layout.header.tlvOffset)])
    moved.appendTLVAreas(to: &bytes)
    guard case .invalid(.malformed(let reason)) = try verify(bytes, version: Self.samples[0].version) else {
      Issue.record("an unprotected SEC_CNT passed"); return
    }
    #expect(reason.contains("unprotected"))
  }

  /// A minimal MCUboot image made with this project's encoders: 64-byte header, 100-byte payload.
  private func buildImage(
    withHash: Bool = false, extraHash: Bool = false, unprotected: [MCUbootTLV] = [],
    flags: MCUbootHeader.Flags = []
  ) throws -> [UInt8] {
    let protectedArea = try MCUbootTLVArea(
      kind: .protected, entries: [MCUbootTLV(type: .securityCounter, value: [1, 0, 0, 0])])
    let header = MCUbootHeader(
      headerSize: 64, protectedTLVSize: protectedArea.totalLength, imageSize: 100, flags: flags,
      version: .zero)
    var image: [UInt8] = []
    header.append(to: &image)
    image += [UInt8](repeating: 0, count: 64 - MCUbootHeader.byteCount)
    image += (0..<100).map { UInt8($0) }
    protectedArea.append(to: &image)
    var entries = unprotected
    if withHash {
      let digest = Array(SHA256.hash(data: Data(image)))
      entries.insert(MCUbootTLV(type: .sha256, value: digest), at: 0)
      if extraHash { entries.append(MCUbootTLV(type: .sha256, value: digest)) }
    }
    try MCUbootTLVArea(kind: .unprotected, entries: entries).append(to: &image)
    return image
  }
}

/// A slot over bytes in memory, private to these tests. `largestRead` makes it refuse reads larger
/// than the verifier is supposed to make, so the tests also prove the image is streamed.
private struct SliceSlotReader: ImageSource {
  let bytes: [UInt8]
  let largestRead: Int

  init(_ bytes: [UInt8], largestRead: Int = .max) {
    self.bytes = bytes
    self.largestRead = largestRead
  }

  var capacity: UInt64 { UInt64(bytes.count) }

  func read(at offset: UInt64, count: Int) throws(SliceReadError) -> [UInt8] {
    guard count >= 0, offset <= capacity, UInt64(count) <= capacity - offset else {
      throw .outOfBounds(offset: offset, count: count, capacity: capacity)
    }
    guard count <= largestRead else { throw .tooLarge(count: count, largest: largestRead) }
    return Array(bytes[Int(offset)..<Int(offset) + count])
  }
}

/// Why a slot in memory refused a read.
private enum SliceReadError: Error, Equatable {
  case outOfBounds(offset: UInt64, count: Int, capacity: UInt64)
  /// A read larger than the verifier is supposed to make.
  case tooLarge(count: Int, largest: Int)
}

/// A source that returns one byte fewer than asked from `offset` on: the verifier stops there and
/// judges the image malformed instead of hashing bytes it never got.
private struct ShortReadingSource: ImageSource {
  let bytes: [UInt8]
  let shortFrom: UInt64

  var capacity: UInt64 { UInt64(bytes.count) }

  func read(at offset: UInt64, count: Int) throws(SliceReadError) -> [UInt8] {
    let whole = try SliceSlotReader(bytes).read(at: offset, count: count)
    return offset >= shortFrom ? Array(whole.dropLast()) : whole
  }
}

/// A slot that answers the verifier's 32-byte header read with other bytes than it streams.
private struct TwoFacedSlotReader: ImageSource {
  let streamed: [UInt8]
  let headerRead: [UInt8]

  var capacity: UInt64 { UInt64(streamed.count) }

  func read(at offset: UInt64, count: Int) throws(SliceReadError) -> [UInt8] {
    if offset == 0, count == headerRead.count { return headerRead }
    return try SliceSlotReader(streamed).read(at: offset, count: count)
  }
}

/// The committed sample images, found relative to this file: Tests/OTATrustTests/ → package root.
extension ImageVerdict {
  var isValid: Bool { if case .valid = self { true } else { false } }
}

private enum VerifierSampleImages {
  static let directory = RepositoryRoot.url
    .appendingPathComponent("Images")

  static func bytes(_ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
  }
}

/// CRC-32/ISO-HDLC bit by bit: slow, obviously right, and independent of zlib.
private func referenceCRC32(_ bytes: [UInt8]) -> UInt32 {
  var crc: UInt32 = 0xffff_ffff
  for byte in bytes {
    crc ^= UInt32(byte)
    for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xedb8_8320 : 0) }
  }
  return ~crc
}

extension Array where Element == UInt8 {
  fileprivate var hex: String { map { String(format: "%02x", $0) }.joined() }
}
