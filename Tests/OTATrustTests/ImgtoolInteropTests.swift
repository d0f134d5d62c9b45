import Foundation
import OTATestSupport
import OTATrust
import OTAWire
import Testing

/// Interoperability with MCUboot's real imgtool, both ways: its keys and the images it signs verify
/// here; the keys and images made here pass `imgtool verify` and `imgtool dumpinfo` shows what was
/// meant. Without imgtool these tests fail and say how to get it (Scripts/setup.sh).
@Suite("imgtool interop")
struct ImgtoolInteropTests {
  static let version = "1.2.3+4"
  static let parsedVersion = Version(major: 1, minor: 2, revision: 3, build: 4)
  static let payload = SeededGenerator.bytes(5000, seed: 4)

  /// imgtool sign options, and what the image must then carry.
  struct Variant: Sendable, CustomTestStringConvertible {
    let name: String
    let arguments: [String]
    let securityCounter: SecurityCounter?
    let publicKeyFormat: PublicKeyFormat
    /// SEC_CNT's value for version 1.2.3+4.
    var expectedCounter: UInt32? { securityCounter?.resolved(for: ImgtoolInteropTests.parsedVersion) }
    var testDescription: String { name }
  }

  static let variants = [
    Variant(name: "plain", arguments: [], securityCounter: nil, publicKeyFormat: .hash),
    Variant(
      name: "security counter 7", arguments: ["--security-counter", "7"], securityCounter: .value(7),
      publicKeyFormat: .hash),
    Variant(
      name: "security counter auto", arguments: ["--security-counter", "auto"], securityCounter: .fromVersion,
      publicKeyFormat: .hash),
    Variant(
      name: "full public key", arguments: ["--public-key-format", "full"], securityCounter: nil,
      publicKeyFormat: .full),
  ]

  static func imgtoolSign(
    _ imgtool: Imgtool, key: String?, payload: String, output: String, _ extra: [String]
  )
    throws
  {
    try imgtool.expectSuccess(
      ["sign", "--pad-header", "-H", "0x200", "-S", "0x100000", "-v", version]
        + (key.map { ["-k", $0] } ?? []) + extra + [payload, output])
  }

  // MARK: - imgtool's keys and images, checked here

  @Test(arguments: SigningAlgorithm.allCases)
  func imgtoolsKeysAndSignedImagesVerifyHere(_ algorithm: SigningAlgorithm) throws {
    // [SEC-SIG-2]
    let imgtool = try Imgtool.locate()
    let folder = try TemporaryDirectory(label: "otatrust")
    defer { folder.remove() }
    try imgtool.expectSuccess(["keygen", "-k", folder.path("key.pem"), "-t", algorithm.rawValue])
    try imgtool.expectSuccess([
      "getpub", "-k", folder.path("key.pem"), "-e", "pem", "-o", folder.path("key.pub.pem"),
    ])
    let publicKey = try ImagePublicKey(pem: String(decoding: folder.read("key.pub.pem"), as: UTF8.self))
    let signingKey = try ImageSigningKey(pem: String(decoding: folder.read("key.pem"), as: UTF8.self))
    #expect(publicKey.algorithm == algorithm)
    #expect(signingKey.publicKey == publicKey)
    let payload = try folder.write(Self.payload, "payload.bin")

    for variant in Self.variants {
      try Self.imgtoolSign(
        imgtool, key: folder.path("key.pem"), payload: payload, output: folder.path("image.bin"),
        variant.arguments)
      let image = try folder.read("image.bin")
      let inspection = try MCUbootImageInspection(image: image, keys: [publicKey])
      #expect(inspection.isGood, "\(variant.name): \(inspection.text)")
      #expect(inspection.signature == .verified(publicKey), "\(variant.name)")
      #expect(inspection.header.version == Self.parsedVersion, "\(variant.name)")
      #expect(inspection.securityCounter == variant.expectedCounter, "\(variant.name)")
      #expect(inspection.trailingByteCount == 0, "\(variant.name)")
      let keyTLV: MCUbootTLVType = variant.publicKeyFormat == .full ? .publicKey : .keyHash
      #expect(
        inspection.entries.filter { $0.area == .unprotected }.map(\.type) == [
          .sha256, keyTLV, algorithm.signatureTLV,
        ],
        "\(variant.name)")
      let stranger = ImageSigningKey.generate(algorithm).publicKey
      #expect(try MCUbootImageInspection(image: image, keys: [stranger]).signature != .verified(stranger))
    }
  }

  /// imgtool and the builder lay an image out identically: with Ed25519 (deterministic signatures)
  /// the files are equal byte for byte; with ECDSA everything before the signature is.
  @Test(arguments: SigningAlgorithm.allCases)
  func imgtoolAndTheBuilderMakeTheSameBytes(_ algorithm: SigningAlgorithm) throws {
    let imgtool = try Imgtool.locate()
    let folder = try TemporaryDirectory(label: "otatrust")
    defer { folder.remove() }
    try imgtool.expectSuccess(["keygen", "-k", folder.path("key.pem"), "-t", algorithm.rawValue])
    let key = try ImageSigningKey(pem: String(decoding: folder.read("key.pem"), as: UTF8.self))
    let payload = try folder.write(Self.payload, "payload.bin")

    for variant in Self.variants {
      try Self.imgtoolSign(
        imgtool, key: folder.path("key.pem"), payload: payload, output: folder.path("image.bin"),
        variant.arguments)
      let theirs = try folder.read("image.bin")
      let ours = try MCUbootImageBuilder(
        version: Self.parsedVersion, securityCounter: variant.securityCounter,
        publicKeyFormat: variant.publicKeyFormat
      ).build(payload: Self.payload, signingKey: key)
      if algorithm == .ed25519 {
        #expect(firstDifference(ours, theirs) == nil, "\(variant.name)")
      } else {
        let signatureLength = try #require(try unprotectedValue(theirs, .ecdsaSignature)).count
        let oursLength = try #require(try unprotectedValue(ours, .ecdsaSignature)).count
        // Up to the unprotected area's length field (it counts the signature's variable length).
        let hashedLength = Int(try MCUbootImageLayout(parsing: ours).header.hashedLength)
        #expect(
          firstDifference(ours[..<(hashedLength + 2)], theirs[..<(hashedLength + 2)]) == nil,
          "\(variant.name)")
        // Then SHA256, the key TLV and the signature TLV's type, up to its length field.
        #expect(
          firstDifference(
            ours[(hashedLength + 4)..<(ours.count - oursLength - 2)],
            theirs[(hashedLength + 4)..<(theirs.count - signatureLength - 2)]) == nil, "\(variant.name)")
      }
    }
    // Unsigned, and with other header sizes and a load address.
    for (arguments, builder) in [
      (["-H", "0x200"], MCUbootImageBuilder(version: Self.parsedVersion)),
      (["-H", "32"], MCUbootImageBuilder(version: Self.parsedVersion, headerSize: 32)),
      (
        ["-H", "0x1000", "--load-addr", "0x20000000"],
        MCUbootImageBuilder(version: Self.parsedVersion, headerSize: 0x1000, loadAddress: 0x2000_0000)
      ),
    ] {
      try imgtool.expectSuccess(
        ["sign", "--pad-header", "-S", "0x100000", "-v", Self.version] + arguments + [
          payload, folder.path("unsigned.bin"),
        ])
      #expect(
        firstDifference(try builder.build(payload: Self.payload), try folder.read("unsigned.bin")) == nil,
        "\(arguments)")
    }
  }

  /// The checked-in samples, made by imgtool, also pass imgtool's own verify: the tool and the
  /// samples agree, so the sample-based tests elsewhere test against imgtool's format.
  @Test func theCheckedInSamplesPassImgtoolVerify() throws {
    let imgtool = try Imgtool.locate()
    let images = RepositoryRoot.url.appendingPathComponent("Images")
    for (image, key) in [
      ("mcuboot-ed25519-100KiB.bin", "test-ed25519"), ("mcuboot-ecdsa-p256-1B.bin", "test-ecdsa-p256"),
      ("firmware-v2.bin", "test-ed25519"),
    ] {
      let output = try imgtool.expectSuccess(
        [
          "verify", "-k", images.appendingPathComponent("keys/\(key).pub.pem").path,
          images.appendingPathComponent(image).path,
        ])
      #expect(output.contains("Image was correctly validated"), "\(image): \(output)")
    }
  }

  // MARK: - Keys and images made here, checked by imgtool

  @Test(arguments: SigningAlgorithm.allCases)
  func ourKeysAreImgtoolKeys(_ algorithm: SigningAlgorithm) throws {
    let imgtool = try Imgtool.locate()
    let folder = try TemporaryDirectory(label: "otatrust")
    defer { folder.remove() }
    let key = ImageSigningKey.generate(algorithm)
    _ = try folder.write(Array(key.pem.utf8), "ours.pem")
    let publicPEM = try imgtool.expectSuccess(["getpub", "-k", folder.path("ours.pem"), "-e", "pem"])
    #expect(publicPEM == key.publicKey.pem, "imgtool derives the same public key and writes the same PEM")
    // imgtool signs with our key; the image verifies here.
    let payload = try folder.write(Self.payload, "payload.bin")
    try Self.imgtoolSign(
      imgtool, key: folder.path("ours.pem"), payload: payload, output: folder.path("image.bin"), [])
    #expect(
      try MCUbootImageInspection(image: folder.read("image.bin"), keys: [key.publicKey]).signature
        == .verified(key.publicKey))
  }

  @Test(arguments: SigningAlgorithm.allCases)
  func ourImagesPassImgtoolVerifyAndDumpinfoShowsWhatWeMeant(_ algorithm: SigningAlgorithm) throws {
    let imgtool = try Imgtool.locate()
    let folder = try TemporaryDirectory(label: "otatrust")
    defer { folder.remove() }
    let key = ImageSigningKey.generate(algorithm)
    let privatePath = try folder.write(Array(key.pem.utf8), "ours.pem")
    let publicPath = try folder.write(Array(key.publicKey.pem.utf8), "ours.pub.pem")
    let stranger = try folder.write(Array(ImageSigningKey.generate(algorithm).pem.utf8), "stranger.pem")

    for variant in Self.variants {
      let image = try MCUbootImageBuilder(
        version: Self.parsedVersion, securityCounter: variant.securityCounter,
        publicKeyFormat: variant.publicKeyFormat
      ).build(payload: Self.payload, signingKey: key)
      let path = try folder.write(image, "image.bin")
      for keyPath in [privatePath, publicPath] {
        let output = try imgtool.expectSuccess(["verify", "-k", keyPath, path])
        #expect(output.contains("Image was correctly validated"), "\(variant.name): \(output)")
        #expect(output.contains("Image version: 1.2.3+4"), "\(variant.name): \(output)")
      }
      let refused = try imgtool.run(["verify", "-k", stranger, path])
      #expect(
        !refused.succeeded, "\(variant.name): imgtool verify must fail with another key: \(refused.output)")

      let dump = try imgtool.dumpinfo(path)
      let header = try #require(dump["header"] as? [String: Any])
      #expect(header["version"] as? String == "1.2.3+4", "\(variant.name)")
      #expect(header["hdr_size"] as? Int == 0x200, "\(variant.name)")
      #expect(header["img_size"] as? Int == Self.payload.count, "\(variant.name)")
      #expect(header["flags"] as? Int == 0, "\(variant.name)")
      #expect(
        header["protected_tlv_size"] as? Int == (variant.expectedCounter == nil ? 0 : 12), "\(variant.name)")
      let area = try #require(dump["tlv_area"] as? [String: Any])
      let protected = (area["tlvs_prot"] as? [[String: Any]] ?? []).map {
        "\($0["type_name"]!)=\($0["data"]!)"
      }
      let counterHex = variant.expectedCounter.map { value in
        Hex.string((0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) })
      }
      #expect(protected == (counterHex.map { ["SEC_CNT=\($0)"] } ?? []), "\(variant.name)")
      let unprotected = try #require(area["tlvs"] as? [[String: Any]])
      // imgtool spells ECDSA_SIG without the underscore.
      let signatureName = algorithm == .ed25519 ? "ED25519" : "ECDSASIG"
      let (keyName, keyValue) =
        variant.publicKeyFormat == .full ? ("PUBKEY", key.publicKey.der) : ("KEYHASH", key.publicKey.keyHash)
      #expect(
        unprotected.map { $0["type_name"] as? String } == ["SHA256", keyName, signatureName],
        "\(variant.name)")
      #expect(
        unprotected.count == 3 && unprotected[1]["data"] as? String == Hex.string(keyValue), "\(variant.name)"
      )
    }
  }

  /// An image imgtool signed, signed again here with another key: imgtool accepts the new
  /// signature and no longer the old one.
  @Test func imagesResignedHerePassImgtoolVerify() throws {
    let imgtool = try Imgtool.locate()
    let folder = try TemporaryDirectory(label: "otatrust")
    defer { folder.remove() }
    try imgtool.expectSuccess(["keygen", "-k", folder.path("theirs.pem"), "-t", "ed25519"])
    let payload = try folder.write(Self.payload, "payload.bin")
    try Self.imgtoolSign(
      imgtool, key: folder.path("theirs.pem"), payload: payload, output: folder.path("image.bin"),
      ["-s", "auto"])
    let ours = ImageSigningKey.generate(.ecdsaP256)
    let oursPath = try folder.write(Array(ours.pem.utf8), "ours.pem")
    let resigned = try MCUbootImageSigner.sign(folder.read("image.bin"), with: ours)
    let path = try folder.write(resigned, "resigned.bin")
    let output = try imgtool.expectSuccess(["verify", "-k", oursPath, path])
    #expect(output.contains("Image was correctly validated"))
    let old = try imgtool.run(["verify", "-k", folder.path("theirs.pem"), path])
    #expect(!old.succeeded, "the old key's signature is gone: \(old.output)")
    #expect(
      try MCUbootImageInspection(image: resigned, keys: [ours.publicKey]).securityCounter == 0x0102_0003)
  }
}
