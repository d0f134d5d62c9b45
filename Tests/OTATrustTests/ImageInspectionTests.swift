import Foundation
import OTATestSupport
import OTATrust
import OTAWire
import Testing

/// The inspection model on imgtool's checked-in sample images and on damaged copies of them.
@Suite("Inspecting MCUboot images")
struct ImageInspectionTests {
  static let ed25519Public = { try! ImagePublicKey(pem: sampleText("keys/test-ed25519.pub.pem")) }()
  static let p256Public = { try! ImagePublicKey(pem: sampleText("keys/test-ecdsa-p256.pub.pem")) }()

  @Test func theEd25519SampleVerifiesWithEveryFieldDecoded() throws {
    let image = try sampleFile("mcuboot-ed25519-100KiB.bin")
    let inspection = try MCUbootImageInspection(image: image, keys: [Self.p256Public, Self.ed25519Public])
    #expect(inspection.header.version == Version(major: 2, minor: 0, revision: 1, build: 7))
    #expect(inspection.header.headerSize == 0x200)
    #expect(inspection.header.imageSize == 102_400)
    #expect(inspection.securityCounter == 3)
    #expect(inspection.fileLength == 103_068)
    #expect(inspection.trailingByteCount == 0)
    #expect(
      inspection.entries.map { "\($0.area) \($0.offset) \($0.type.name ?? "?") \($0.value.count)" } == [
        "protected 102916 SEC_CNT 4", "unprotected 102928 SHA256 32", "unprotected 102964 KEYHASH 32",
        "unprotected 103000 ED25519 64",
      ])
    #expect(
      inspection.hash
        == .matches(HexNotation.bytes("b79e354ea339879bef35c59dbb6ef0f1073e3ccc15548d8f5a9aee0c1b6d1ae5")))
    #expect(inspection.signature == .verified(Self.ed25519Public))
    #expect(inspection.isGood)
  }

  @Test func everySignedSampleVerifiesWithItsKeyOnly() throws {
    for (name, key, other) in [
      ("mcuboot-ecdsa-p256-1B.bin", Self.p256Public, Self.ed25519Public),
      ("firmware-v1.bin", Self.ed25519Public, Self.p256Public),
      ("firmware-v2.bin", Self.ed25519Public, Self.p256Public),
      ("firmware-v3.bin", Self.ed25519Public, Self.p256Public),
    ] {
      let image = try sampleFile(name)
      #expect(try MCUbootImageInspection(image: image, keys: [key]).signature == .verified(key), "\(name)")
      let wrong = try MCUbootImageInspection(image: image, keys: [other])
      #expect(
        wrong.signature == .rejected("signed by a key this device does not trust (key hash \(key.shortID))"),
        "\(name)")
      #expect(!wrong.isGood)
      #expect(try MCUbootImageInspection(image: image, keys: []).signature == .notRequested)
    }
  }

  @Test func theUnsignedSampleHasAGoodHashAndNoSignature() throws {
    let image = try sampleFile("mcuboot-unsigned-4099B.bin")
    let unchecked = try MCUbootImageInspection(image: image, keys: [])
    #expect(unchecked.isGood)
    #expect(unchecked.securityCounter == nil)
    #expect(unchecked.entries.map(\.type) == [.sha256])
    let checked = try MCUbootImageInspection(image: image, keys: [Self.ed25519Public])
    #expect(checked.signature == .rejected("the image is not signed"))
    #expect(!checked.isGood)
  }

  @Test func aChangedPayloadIsAHashMismatchAndTheSignatureIsNotConsulted() throws {
    var image = try sampleFile("mcuboot-ed25519-100KiB.bin")
    image[0x200 + 5000] ^= 0x10
    let inspection = try MCUbootImageInspection(image: image, keys: [Self.ed25519Public])
    guard case .mismatch(let recorded, let computed) = inspection.hash else {
      Issue.record("expected a mismatch, got \(inspection.hash)")
      return
    }
    #expect(Hex.string(recorded) == "b79e354ea339879bef35c59dbb6ef0f1073e3ccc15548d8f5a9aee0c1b6d1ae5")
    #expect(recorded != computed)
    #expect(
      inspection.signature == .skipped("the image's hash is not right, so its signature was not checked"))
    #expect(!inspection.isGood)
  }

  @Test func hashesItCannotCheckAreSaidSo() throws {
    let unsigned = try sampleFile("mcuboot-unsigned-4099B.bin")
    var encrypted = unsigned
    encrypted[16] = 0x04
    #expect(
      try MCUbootImageInspection(image: encrypted, keys: []).hash
        == .uncheckable(
          "the payload is encrypted and MCUboot hashes the plaintext; cannot decrypt: no decryption key given "
            + "(--decryption-key)"))
    let noHash = try replacingUnprotectedTLVs(unsigned) { _ in [] }
    #expect(
      try MCUbootImageInspection(image: noHash, keys: []).hash == .uncheckable("the image has no SHA256 TLV"))
    let sha512 = try replacingUnprotectedTLVs(unsigned) { _ in
      [MCUbootTLV(type: .sha512, value: [UInt8](repeating: 0, count: 64))]
    }
    #expect(
      try MCUbootImageInspection(image: sha512, keys: []).hash
        == .uncheckable("the image is hashed with SHA512 (0x12); only SHA256 is checked"))
    let twice = try replacingUnprotectedTLVs(unsigned) { $0 + $0 }
    #expect(
      try MCUbootImageInspection(image: twice, keys: []).hash
        == .uncheckable("the image has 2 SHA256 TLVs; MCUboot expects one"))
    #expect(try !MCUbootImageInspection(image: twice, keys: []).isGood)
  }

  @Test func trailingBytesAreCountedNotRefused() throws {
    let image = try sampleFile("mcuboot-unsigned-4099B.bin") + [UInt8](repeating: 0xff, count: 100)
    let inspection = try MCUbootImageInspection(image: image, keys: [])
    #expect(inspection.trailingByteCount == 100)
    #expect(inspection.isGood)
    #expect(inspection.text.contains("trailing:  100 bytes after the TLV areas (ignored by MCUboot)"))
  }

  @Test func aRawOrBrokenFileIsRefusedWithAReason() throws {
    #expect(throws: ImageError.notMCUboot("it does not start with the magic 0x96f3b83d (a raw payload?)")) {
      try MCUbootImageInspection(image: sampleFile("raw-4099B.bin"), keys: [])
    }
    let cut = Array(try sampleFile("mcuboot-unsigned-4099B.bin").dropLast(10))
    #expect(
      throws: ImageError.malformed(
        "unprotected TLV area at offset 4611 declares 40 bytes but only 30 are present")
    ) { try MCUbootImageInspection(image: cut, keys: []) }
  }

  @Test func theTextReportNamesEveryFact() throws {
    let text = try MCUbootImageInspection(
      image: sampleFile("mcuboot-ed25519-100KiB.bin"), keys: [Self.ed25519Public]
    ).text
    let lines = text.split(separator: "\n").map(String.init)
    #expect(lines[0] == "MCUboot image, 103068 bytes")
    #expect(
      lines[1] == "header:    hdr_size 0x200 (512), img_size 0x19000 (102400), protect_tlv_size 0xc (12)")
    #expect(lines[2] == "           load_addr 0x0, flags 0x0 (none)")
    #expect(lines.contains("version:   2.0.1+7"))
    #expect(lines.contains("security counter: 3 (0x3)"))
    #expect(lines.contains("  protected   0x19204   SEC_CNT (0x50)         4 B  03000000"))
    #expect(
      lines.contains {
        $0.hasPrefix("  unprotected 0x19258   ED25519 (0x24)        64 B  ab05b3dc87874641")
          && $0.hasSuffix("…")
      })
    #expect(
      lines.contains(
        "hash:      ok, SHA-256 b79e354ea339879bef35c59dbb6ef0f1073e3ccc15548d8f5a9aee0c1b6d1ae5 matches the SHA256 TLV"
      ))
    #expect(lines.last == "signature: verified with the ed25519 key b56e139585fd01de")
  }

  @Test func theJSONReportHasAStableShape() throws {
    let image = try sampleFile("mcuboot-ed25519-100KiB.bin")
    let inspection = try MCUbootImageInspection(image: image, keys: [Self.ed25519Public])
    let object = try #require(
      try JSONSerialization.jsonObject(with: JSONEncoder().encode(inspection)) as? [String: Any])
    #expect(object["ok"] as? Bool == true)
    #expect(object["version"] as? String == "2.0.1+7")
    #expect(object["securityCounter"] as? Int == 3)
    let header = try #require(object["header"] as? [String: Any])
    #expect(header["headerSize"] as? Int == 512)
    #expect(header["imageSize"] as? Int == 102_400)
    #expect(header["flagNames"] as? [String] == [])
    let tlvs = try #require(object["tlvs"] as? [[String: Any]])
    #expect(tlvs.map { $0["name"] as? String } == ["SEC_CNT", "SHA256", "KEYHASH", "ED25519"])
    #expect(tlvs[0]["area"] as? String == "protected")
    #expect(tlvs[0]["value"] as? String == "03000000")
    #expect(tlvs[2]["value"] as? String == Hex.string(Self.ed25519Public.keyHash))
    let hash = try #require(object["hash"] as? [String: Any])
    #expect(hash["result"] as? String == "matches")
    let signature = try #require(object["signature"] as? [String: Any])
    #expect(signature["result"] as? String == "verified")
    #expect(signature["algorithm"] as? String == "ed25519")

    let unsigned = try MCUbootImageInspection(image: sampleFile("mcuboot-unsigned-4099B.bin"), keys: [])
    let unsignedObject = try #require(
      try JSONSerialization.jsonObject(with: JSONEncoder().encode(unsigned)) as? [String: Any])
    #expect(unsignedObject["securityCounter"] is NSNull)
    #expect((unsignedObject["signature"] as? [String: Any])?["result"] as? String == "not-requested")
  }
}
