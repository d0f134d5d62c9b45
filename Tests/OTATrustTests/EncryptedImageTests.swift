import Foundation
import OTAChecksum
import OTATestSupport
import OTATrust
import OTAWire
import Testing

/// Images encrypted by MCUboot's own imgtool (`imgtool sign --encrypt`), for each key type it
/// wraps for and both AES key lengths: the device's key unwraps the AES key, the checks see the
/// ciphertext as sent (the sender's CRC32) and the plaintext (MCUboot's SHA-256 and signature),
/// whatever part of the payload is already decrypted in place.
@Suite("encrypted images (imgtool)")
struct EncryptedImageTests {
  static let payload = SeededGenerator.bytes(5000, seed: 46)

  struct Case: Sendable, CustomTestStringConvertible {
    let algorithm: EncryptionAlgorithm
    let keyBits: Int
    var extra: [String] = []
    var tlv: MCUbootTLVType
    var testDescription: String {
      "\(algorithm) AES-\(keyBits)\(extra.isEmpty ? "" : " " + extra.joined(separator: " "))"
    }
  }

  static let cases = [
    Case(algorithm: .x25519, keyBits: 128, tlv: .encryptedX25519),
    Case(algorithm: .x25519, keyBits: 256, tlv: .encryptedX25519),
    Case(algorithm: .x25519, keyBits: 128, extra: ["--hmac-sha", "512"], tlv: .encryptedX25519SHA512),
    Case(algorithm: .p256, keyBits: 128, tlv: .encryptedEC256),
    Case(algorithm: .p256, keyBits: 256, tlv: .encryptedEC256),
    Case(algorithm: .rsa2048, keyBits: 128, tlv: .encryptedRSA2048),
    Case(algorithm: .rsa2048, keyBits: 256, tlv: .encryptedRSA2048),
  ]

  /// A signing key, a device key of `algorithm`, and an image imgtool signed and encrypted for it.
  struct Made {
    let folder: TemporaryDirectory
    let image: [UInt8]
    let deviceKey: ImageDecryptionKey
    let signer: ImagePublicKey
  }

  static func make(_ testCase: Case, encryptFor keyFile: String? = nil) throws -> Made {
    let imgtool = try Imgtool.locate()
    let folder = try TemporaryDirectory(label: "otatrust-enc")
    try imgtool.expectSuccess(["keygen", "-k", folder.path("sign.pem"), "-t", "ed25519"])
    try imgtool.expectSuccess(["keygen", "-k", folder.path("device.pem"), "-t", testCase.algorithm.rawValue])
    let payload = try folder.write(Self.payload, "payload.bin")
    try imgtool.expectSuccess(
      ["sign", "--pad-header", "-H", "0x200", "-S", "0x100000", "-v", "2.0.0", "-k", folder.path("sign.pem")]
        + ["--encrypt", keyFile ?? folder.path("device.pem"), "--encrypt-keylen", "\(testCase.keyBits)"]
        + testCase.extra + [payload, folder.path("image.bin")])
    return Made(
      folder: folder, image: try folder.read("image.bin"),
      deviceKey: try ImageDecryptionKey(pem: String(decoding: try folder.read("device.pem"), as: UTF8.self)),
      signer: try ImageSigningKey(pem: String(decoding: try folder.read("sign.pem"), as: UTF8.self)).publicKey
    )
  }

  static func verify(_ image: [UInt8], crc: UInt32? = nil, _ view: PayloadView, signer: ImagePublicKey)
    -> ImageVerdict
  {
    ImageVerifier.verify(
      reader: Bytes(bytes: image), size: UInt64(image.count), expectedCRC: crc ?? CRC32.checksum(image),
      preparedVersion: Version(major: 2, minor: 0, revision: 0), policy: ImagePolicy(trustedKeys: [signer]),
      payload: view, chunkSize: 777)
  }

  /// The image with its payload decrypted in place below slot offset `boundary`.
  static func decrypted(_ image: [UInt8], below boundary: Int, with key: ImageDecryptionKey) throws -> [UInt8]
  {
    let layout = try MCUbootImageLayout(parsing: image)
    let contentKey = try key.unwrap(flags: layout.header.flags, tlvs: layout.unprotectedTLVs).get()
    let start = Int(layout.header.headerSize)
    let end = min(boundary, start + Int(layout.header.imageSize))
    guard end > start else { return image }
    var result = image
    result.replaceSubrange(start..<end, with: contentKey.crypt(Array(image[start..<end]), atPayloadOffset: 0))
    return result
  }

  @Test(arguments: cases)
  func imgtoolsEncryptedImagesVerifyAsSentAndDecryptToTheirPlaintext(_ testCase: Case) throws {
    // [SEC-ENC-1]
    let made = try Self.make(testCase)
    defer { made.folder.remove() }
    let layout = try MCUbootImageLayout(parsing: made.image)
    #expect(layout.header.flags.contains(testCase.keyBits == 256 ? .encryptedAES256 : .encryptedAES128))
    #expect(layout.unprotectedTLVs.contains { $0.type == testCase.tlv })
    let start = Int(layout.header.headerSize)
    #expect(Array(made.image[start..<start + 64]) != Array(Self.payload[0..<64]), "the payload is ciphertext")

    guard
      case .valid(let report) = Self.verify(
        made.image, .asSent(key: made.deviceKey, plaintextBelow: 0), signer: made.signer)
    else {
      Issue.record(
        "\(testCase): \(Self.verify(made.image, .asSent(key: made.deviceKey, plaintextBelow: 0), signer: made.signer))"
      )
      return
    }
    #expect(report.signedBy == made.signer)
    #expect(report.sha256 == (try unprotectedValue(made.image, .sha256)))
    // Decrypted, the payload is imgtool's input, padded with zeros to a whole AES block.
    let plain = try Self.decrypted(made.image, below: made.image.count, with: made.deviceKey)
    let padded = Self.payload + [UInt8](repeating: 0, count: (16 - Self.payload.count % 16) % 16)
    #expect(Array(plain[start..<start + padded.count]) == padded)
    #expect(Int(layout.header.imageSize) == padded.count)
  }

  /// In place, block by block: at every boundary the same image is seen, as sent and as plaintext.
  @Test func aPayloadPartlyDecryptedInPlaceChecksAsTheWholeCiphertextDid() throws {
    let made = try Self.make(Case(algorithm: .x25519, keyBits: 128, tlv: .encryptedX25519))
    defer { made.folder.remove() }
    let crc = CRC32.checksum(made.image)
    for boundary in [0, 0x200, 0x201, 0x200 + 777, 0x200 + 4096, 0x200 + 4999, made.image.count] {
      let slot = try Self.decrypted(made.image, below: boundary, with: made.deviceKey)
      let verdict = Self.verify(
        slot, crc: crc, .asSent(key: made.deviceKey, plaintextBelow: UInt64(boundary)), signer: made.signer)
      guard case .valid(let report) = verdict else {
        Issue.record("boundary \(boundary): \(verdict)")
        continue
      }
      #expect(report.crc32 == crc, "boundary \(boundary): the CRC32 is the sender's")
      #expect(report.storedCRC32 == CRC32.checksum(slot), "boundary \(boundary)")
    }
    // Once whole, the slot holds what will run and checks without a key, as MCUboot's primary slot.
    let whole = try Self.decrypted(made.image, below: made.image.count, with: made.deviceKey)
    guard
      case .valid(let stored) = Self.verify(whole, crc: CRC32.checksum(whole), .asStored, signer: made.signer)
    else {
      Issue.record("the decrypted image does not check as stored")
      return
    }
    #expect(stored.sha256 == (try unprotectedValue(made.image, .sha256)))
    // The ciphertext checked as stored is not the image MCUboot hashed.
    #expect(Self.verify(made.image, .asStored, signer: made.signer) == .invalid(.hashMismatch))
    // Claiming a boundary that is not where the plaintext ends: the hash says so.
    #expect(
      Self.verify(made.image, .asSent(key: made.deviceKey, plaintextBelow: 0x400), signer: made.signer)
        == .invalid(
          .crcMismatch(
            expected: crc,
            actual: CRC32.checksum(try Self.decrypted(made.image, below: 0x400, with: made.deviceKey)))))
  }

  @Test func anImageForAnotherDeviceOrWithoutAKeyIsRefusedWithTheReason() throws {
    let made = try Self.make(Case(algorithm: .x25519, keyBits: 128, tlv: .encryptedX25519))
    defer { made.folder.remove() }
    guard
      case .invalid(.cannotDecrypt(let none)) = Self.verify(
        made.image, .asSent(key: nil, plaintextBelow: 0), signer: made.signer)
    else {
      Issue.record("no key must be cannotDecrypt")
      return
    }
    #expect(none.contains("no decryption key"))
    let stranger = try ImageDecryptionKey.generate(.x25519)
    guard
      case .invalid(.cannotDecrypt(let other)) = Self.verify(
        made.image, .asSent(key: stranger, plaintextBelow: 0), signer: made.signer)
    else {
      Issue.record("another device's key must be cannotDecrypt")
      return
    }
    #expect(other.contains("wrapped for another device key"))
    let otherKind = try ImageDecryptionKey.generate(.p256)
    guard
      case .invalid(.cannotDecrypt(let kind)) = Self.verify(
        made.image, .asSent(key: otherKind, plaintextBelow: 0), signer: made.signer)
    else {
      Issue.record("a key of another kind must be cannotDecrypt")
      return
    }
    #expect(kind.contains("ENC_X25519") && kind.contains("P-256"), "\(kind)")
    #expect(ImageProblem.cannotDecrypt(kind).status == .cannotDecrypt)
  }

  /// A tampered wrapped key (one bit of the encrypted key flipped) fails ECIES's tag, not later.
  @Test func aTamperedWrappedKeyFailsItsTag() throws {
    // [SEC-ENC-3]
    let made = try Self.make(Case(algorithm: .p256, keyBits: 128, tlv: .encryptedEC256))
    defer { made.folder.remove() }
    let tampered = try replacingUnprotectedTLVs(made.image) { tlvs in
      tlvs.map { tlv in
        guard tlv.type == .encryptedEC256 else { return tlv }
        var value = tlv.value
        value[value.count - 1] ^= 0x01
        return MCUbootTLV(type: tlv.type, value: value)
      }
    }
    guard
      case .invalid(.cannotDecrypt(let reason)) = Self.verify(
        tampered, .asSent(key: made.deviceKey, plaintextBelow: 0), signer: made.signer)
    else {
      Issue.record("a tampered wrapped key must be refused before the payload is judged")
      return
    }
    #expect(reason.contains("does not open"))
  }

  /// Keys made here work with imgtool: it encrypts for our public key, and our private key PEM
  /// reads back as the same key.
  @Test(arguments: [EncryptionAlgorithm.x25519, .p256, .rsa2048])
  func keysMadeHereAreKeysImgtoolEncryptsFor(_ algorithm: EncryptionAlgorithm) throws {
    let key = try ImageDecryptionKey.generate(algorithm)
    #expect(try ImageDecryptionKey(pem: key.pem) == key)
    #expect(try ImageEncryptionKey(pem: key.encryptionKey.pem) == key.encryptionKey)
    let folder = try TemporaryDirectory(label: "otatrust-enc")
    defer { folder.remove() }
    let publicFile = try folder.write(Array(key.encryptionKey.pem.utf8), "device.pub.pem")
    let made = try Self.make(
      Case(algorithm: algorithm, keyBits: 128, tlv: algorithm.tlvTypes[0]), encryptFor: publicFile)
    defer { made.folder.remove() }
    #expect(Self.verify(made.image, .asSent(key: key, plaintextBelow: 0), signer: made.signer).isValid)
  }

  /// The AES key wrapped here opens with the device key, for each kind (imgtool's own unwrapping is
  /// MCUboot's C code, which has no command line; the images above are the other direction).
  @Test(arguments: EncryptionAlgorithm.allCases, [128, 256])
  func keysWrappedHereUnwrap(_ algorithm: EncryptionAlgorithm, bits: Int) throws {
    let device = try ImageDecryptionKey.generate(algorithm)
    let content = try #require(ImageContentKey.random(bits: bits))
    let tlv = try device.encryptionKey.wrap(content)
    #expect(algorithm.tlvTypes.contains(tlv.type))
    #expect(try device.unwrap(flags: content.headerFlag, tlvs: [tlv]).get() == content)
    let stranger = try ImageDecryptionKey.generate(algorithm)
    #expect(throws: ImageProblem.self) { try stranger.unwrap(flags: content.headerFlag, tlvs: [tlv]).get() }
  }

  /// MCUboot's ENC_KW is RFC 3394's key wrap: the RFC's own vector (4.1, a 128-bit key with a
  /// 128-bit KEK) unwraps to its key data, read from a base64 key file as MCUboot keeps it; a flipped
  /// bit or another KEK fails the wrap's integrity check.
  @Test func aKeyWrapTLVUnwrapsAsRFC3394Says() throws {
    // [SEC-ENC-1] [SEC-ENC-3]
    let kek = try ImageDecryptionKey(keyFile: "AAECAwQFBgcICQoLDA0ODw==\n")
    #expect(kek.algorithm == .aesKW)
    let wrapped: [UInt8] = HexNotation.bytes("1fa68b0a8112b447aef34bd8fb5a7b829d3e862371d2cfe5")
    let tlv = MCUbootTLV(type: .encryptedKW, value: wrapped)
    #expect(
      try kek.unwrap(flags: .encryptedAES128, tlvs: [tlv]).get().bytes
        == HexNotation.bytes(
          "00112233445566778899aabbccddeeff"))
    var flipped = wrapped
    flipped[5] ^= 0x10
    #expect(throws: ImageProblem.self) {
      try kek.unwrap(flags: .encryptedAES128, tlvs: [MCUbootTLV(type: .encryptedKW, value: flipped)]).get()
    }
    #expect(throws: ImageProblem.self) {
      try ImageDecryptionKey.generate(.aesKW).unwrap(flags: .encryptedAES128, tlvs: [tlv]).get()
    }
    #expect(throws: KeyError.self) { try ImageDecryptionKey(keyFile: "AAECAwQFBgcICQoLDA0O\n") }  // 15 bytes
  }

  /// AES-CTR by offset: any split of the payload decrypts as the whole did.
  @Test func theKeystreamAtAnyOffsetIsTheWholeStreamsSlice() throws {
    let key = try #require(ImageContentKey.random(bits: 256))
    let plain = SeededGenerator.bytes(1000, seed: 7)
    let whole = key.crypt(plain, atPayloadOffset: 0)
    for split in [1, 15, 16, 17, 500, 999] {
      let joined =
        key.crypt(Array(plain[..<split]), atPayloadOffset: 0)
        + key.crypt(Array(plain[split...]), atPayloadOffset: UInt64(split))
      #expect(joined == whole, "split at \(split)")
    }
    #expect(key.crypt(whole, atPayloadOffset: 0) == plain)
  }

  @Test func signingKeysAndOtherPEMsAreNotDeviceKeys() throws {
    let signing = ImageSigningKey.generate(.ed25519)
    #expect(throws: KeyError.self) { try ImageDecryptionKey(pem: signing.pem) }
    #expect(throws: KeyError.self) {
      try ImageDecryptionKey(pem: try ImageDecryptionKey.generate(.x25519).encryptionKey.pem)
    }
  }

  struct Bytes: ImageSource {
    let bytes: [UInt8]
    var capacity: UInt64 { UInt64(bytes.count) }
    func read(at offset: UInt64, count: Int) -> [UInt8] { Array(bytes[Int(offset)..<Int(offset) + count]) }
  }
}
