import OTABoot
import OTAChecksum
import OTAJournal
import OTALink
import OTAReceiverHost
import OTASender
import OTASimulation
import OTASocketLink
import OTAStorage
import OTATestSupport
import OTATrust
import OTAWire
import Testing

/// imgtool's encrypted sample images (Images/mcuboot-enc-*.bin) pushed over the simulated link to
/// a device that holds the key they were encrypted for: the slot ends holding the plaintext, the
/// trial boots it and confirms it, the boot stage finds it intact. A device without the key, or
/// with another, refuses the image with `0x0D cannot decrypt` and runs what it ran.
@Suite struct EncryptedImageEndToEndTests {
  struct Sample: Sendable, CustomTestStringConvertible {
    let image: String
    let payload: String
    let deviceKey: String
    let signer: String
    let version: Version
    var testDescription: String { image }
  }

  static let samples = [
    Sample(
      image: "mcuboot-enc-x25519-100KiB.bin", payload: "raw-100KiB.bin", deviceKey: "test-device-x25519",
      signer: "test-ed25519", version: Version(major: 2, minor: 1, revision: 0)),
    Sample(
      image: "mcuboot-enc-p256-aes256-4099B.bin", payload: "raw-4099B.bin",
      deviceKey: "test-device-ecdsa-p256",
      signer: "test-ecdsa-p256", version: Version(major: 1, minor: 3, revision: 0)),
    Sample(
      image: "mcuboot-enc-rsa-4099B.bin", payload: "raw-4099B.bin", deviceKey: "test-device-rsa-2048",
      signer: "test-ed25519", version: Version(major: 1, minor: 4, revision: 0)),
  ]

  static func key(_ name: String) throws -> ImageDecryptionKey {
    try ImageDecryptionKey(pem: RepositoryRoot.text("Images/keys/\(name).pem"))
  }

  static func fixture(decryptionKey: ImageDecryptionKey?, signer: String) throws -> DeviceFixture {
    var fixture = DeviceFixture(slotCapacity: 256 * 1024)
    fixture.policy = ImagePolicy(
      trustedKeys: [try ImagePublicKey(pem: RepositoryRoot.text("Images/keys/\(signer).pub.pem"))],
      decryptionKey: decryptionKey)
    fixture.decryptionBlockSize = 16 * 1024
    return fixture
  }

  @Test(arguments: samples)
  func anImgtoolEncryptedImageIsInstalledAsItsPlaintext(_ sample: Sample) throws {
    // [P-VAL-11] [P-INFO-7]
    let image = try RepositoryRoot.bytes("Images/\(sample.image)")
    let fixture = try Self.fixture(decryptionKey: try Self.key(sample.deviceKey), signer: sample.signer)
    let run = try fixture.push(image, version: sample.version, conditions: LinkConditions(mtu: 247), seed: 46)
    let device = try #require(run.device)
    #expect(device.running == .b && device.boot.confirmed == .b && device.boot[.b].version == sample.version)
    let layout = try MCUbootImageLayout(parsing: image)
    let start = Int(layout.header.headerSize)
    let payload = try RepositoryRoot.bytes("Images/\(sample.payload)")
    let slot = fixture.medium.slotBytes(.b)
    #expect(Array(slot[start..<start + payload.count]) == payload, "slot B holds the plaintext")
    #expect(Array(slot[0..<start]) == Array(image[0..<start]), "the header stays as it came")
    let tail = Int(layout.header.tlvOffset)..<image.count
    #expect(Array(slot[tail]) == Array(image[tail]), "and so do the TLVs")
    // What the boot state recorded is what the slot holds, so the boot stage finds the image intact.
    let stored = Array(slot.prefix(image.count))
    #expect(device.boot[.b].crc32 == CRC32.checksum(stored))
    #expect(device.boot[.b].crc32 != CRC32.checksum(image))
    let check = try InstalledImageCheck.check(
      .b, recorded: RecordedImage(size: UInt32(image.count), crc32: device.boot[.b].crc32),
      reader: SlotImageSource(try fixture.storage.slots.reader(.b)), policy: fixture.policy)
    guard case .intact = check else {
      Issue.record("the installed image: \(check)")
      return
    }
    #expect(device.info().flags.contains(.decryptsImages))
  }

  @Test func withoutAKeyTheDeviceSaysSoAndOtactlRefusesBeforeSending() throws {
    let sample = Self.samples[0]
    let image = try RepositoryRoot.bytes("Images/\(sample.image)")
    let fixture = try Self.fixture(decryptionKey: nil, signer: sample.signer)
    let run = try fixture.push(
      image, version: sample.version, conditions: LinkConditions(mtu: 247), seed: 47, expectSuccess: false)
    guard case .failed(.validationFailed(.cannotDecrypt), let report) = run.result.outcome else {
      Issue.record("\(String(describing: run.result.outcome))")
      return
    }
    #expect(report.bytesSent == 0, "Info says the device has no key: nothing is sent")
    #expect(fixture.medium.slotBytes(.b).allSatisfy { $0 == 0 }, "slot B was never written")
    let device = try #require(run.device)
    #expect(!device.info().flags.contains(.decryptsImages))
  }

  /// The sender cannot tell another device's key from Info: the device checks the whole image as
  /// sent, fails to open its key and answers 0x0D; its running slot is untouched, nothing is armed.
  @Test(arguments: ["test-device-ecdsa-p256", "test-device-x25519-other"])
  func anotherDevicesKeyIsRefusedAtValidate(_ other: String) throws {
    // [P-VAL-10] [P-VAL-7] [SEC-ENC-3]
    let sample = Self.samples[0]
    let image = try RepositoryRoot.bytes("Images/\(sample.image)")
    let key = other.hasSuffix("-other") ? try ImageDecryptionKey.generate(.x25519) : try Self.key(other)
    let fixture = try Self.fixture(decryptionKey: key, signer: sample.signer)
    let run = try fixture.push(
      image, version: sample.version, conditions: LinkConditions(mtu: 247), seed: 48, expectSuccess: false)
    guard case .failed(.validationFailed(.cannotDecrypt), let report) = run.result.outcome else {
      Issue.record("\(String(describing: run.result.outcome))")
      return
    }
    #expect(report.bytesSent >= image.count, "the whole image went before VALIDATE judged it")
    let device = try #require(run.device)
    #expect(device.running == .a && device.boot.confirmed == .a && device.boot[.b].status == .empty)
    #expect(fixture.runningSlotUntouched)
    #expect(
      device.lastImageRejection?.contains("cannot decrypt") == true, "\(device.lastImageRejection ?? "")")
  }

  /// The device's own check, whatever a sender does: no key, 0x0D with the reason.
  @Test func theDevicesCheckWithoutAKeyAnswersCannotDecrypt() throws {
    // [P-VAL-10] [P-RESP-8]
    let sample = Self.samples[1]
    let image = try RepositoryRoot.bytes("Images/\(sample.image)")
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    fixture.medium.fill(.b, with: image)
    let journal = TransferJournal(
      slot: .b, state: .receiving, size: UInt32(image.count), crc32: CRC32.checksum(image),
      version: sample.version,
      committedOffset: UInt32(image.count))
    let outcome = try ImageCheck.standard(ImagePolicy()).verify(
      try fixture.storage.slots.reader(.b), journal, .none, false, 0)
    guard case .invalid(.cannotDecrypt, let reason) = outcome else {
      Issue.record("\(outcome)")
      return
    }
    #expect(reason.contains("no decryption key"))
    #expect(StatusCode.cannotDecrypt.rawValue == 0x0D && "\(StatusCode.cannotDecrypt)" == "cannot decrypt")
  }

  /// A delta cannot be made between ciphertexts: each image has its own AES key, and the running
  /// slot holds plaintext. Given the previous encrypted image as its base, the push finds the
  /// device runs something else (its identity is the plaintext's), finds no block to copy either,
  /// and sends the new image whole; it still ends confirmed.
  @Test func aDeltaAgainstThePreviousEncryptedImageSendsTheNewOneWhole() throws {
    let key = try ImageDecryptionKey.generate(.x25519)
    var fixture = try Self.fixture(decryptionKey: key, signer: "test-ed25519")
    fixture.decryptionBlockSize = 4096
    let payload = DeviceFixture.image(size: 60_000, seed: 49)
    let signer = try ImageSigningKey(pem: RepositoryRoot.text("Images/keys/test-ed25519.pem"))
    func encrypted(_ version: Version, _ payload: [UInt8]) throws -> [UInt8] {
      try MCUbootImageBuilder(version: version, encryptFor: key.encryptionKey).build(
        payload: payload, signingKey: signer)
    }
    let v2 = Version(major: 2, minor: 0, revision: 0)
    let v3 = Version(major: 3, minor: 0, revision: 0)
    let first = try encrypted(v2, payload)
    _ = try fixture.push(first, version: v2, conditions: LinkConditions(mtu: 247), seed: 50)
    var edited = payload
    edited[30_000] ^= 0xFF
    let second = try encrypted(v3, edited)
    let run = try fixture.push(
      second, version: v3, conditions: LinkConditions(mtu: 247), seed: 51,
      bases: [BaseImage(bytes: first, name: "v2.img")])
    let report = try #require(run.report)
    #expect(report.transferMode != .delta(base: 0), "\(report.transferMode)")
    #expect(
      report.bytesOnAir >= UInt64(second.count), "the whole image went: \(report.bytesOnAir) bytes on air")
    #expect(run.device?.running == .a && run.device?.boot[.a].version == v3)
  }
}
