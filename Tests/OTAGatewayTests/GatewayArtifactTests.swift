import Crypto
import OTAGateway
import OTATestSupport
import OTATrust
import OTAWire
import Testing

/// A downloaded .swu opened for one device: the right board's image, whole, of the version it says.
struct GatewayArtifactTests {
  static func image(_ version: Version = Version(major: 2, minor: 0, revision: 0)) throws -> [UInt8] {
    try MCUbootImageBuilder(version: version).build(payload: SeededGenerator.bytes(3000, seed: 3))
  }

  static func sha256(_ bytes: [UInt8]) -> String { Hex.string(SHA256.hash(data: bytes)) }

  static func swu(
    version: String = "2.0.0+0", board: String = "blueota-sim", revisions: [String] = ["1.0"],
    image: [UInt8], sha256: String? = nil, type: String = SWDescription.imageType, name: String = "fw.bin",
    member: String? = nil
  ) -> [UInt8] {
    let description = SWDescription(
      version: version,
      targets: [
        .init(
          board: board, revisions: revisions,
          images: [.init(filename: name, type: type, sha256: sha256 ?? Self.sha256(image))])
      ])
    return SWUArchive(members: [
      .init(name: SWUArchive.descriptionName, bytes: Array(description.text(description: "t").utf8)),
      .init(name: member ?? name, bytes: image),
    ]).bytes()
  }

  @Test func theDevicesBoardGetsItsImage() throws {
    let image = try Self.image()
    let artifact = try GatewayArtifact(bytes: Self.swu(image: image))
    let opened = try artifact.image(model: "blueota-sim", revision: "1.0")
    #expect(opened.bytes == image)
    #expect(opened.version == Version(major: 2, minor: 0, revision: 0))
  }

  @Test func otherHardwareIsRefusedNamingBoth() throws {
    let artifact = try GatewayArtifact(bytes: Self.swu(image: try Self.image()))
    for (model, revision) in [("rpi4", "1.0"), ("blueota-sim", "2.0"), ("default", "default")] {
      do {
        _ = try artifact.image(model: model, revision: revision)
        Issue.record("taken by \(model) \(revision)")
      } catch {
        #expect(error == .hardware("it is for blueota-sim 1.0; this device is \(model) revision \(revision)"))
      }
    }
  }

  @Test func anImageThatIsNotWhatSWDescriptionSaysIsRefused() throws {
    let image = try Self.image()
    let cases: [([UInt8], String)] = [
      (Self.swu(image: image, sha256: String(repeating: "0", count: 64)), "has SHA-256"),
      (Self.swu(version: "2.0.1+0", image: image), "is version 2.0.0+0, sw-description says 2.0.1+0"),
      (Self.swu(image: image, type: "raw"), "images of type blueota-mcuboot, not one"),
      (Self.swu(image: image, member: "other.bin"), "which the archive does not hold"),
      (Self.swu(image: SeededGenerator.bytes(600, seed: 1)), "is no MCUboot image"),
    ]
    for (bytes, reason) in cases {
      do {
        _ = try GatewayArtifact(bytes: bytes).image(model: "blueota-sim", revision: "1.0")
        Issue.record("taken: \(reason)")
      } catch {
        #expect(error.description.contains(reason), "\(error)")
      }
    }
  }

  @Test func aFileThatIsNoSWUIsRefusedBeforeAnyDevice() throws {
    for bytes in [Array("<html>not found</html>".utf8), [], try Self.image()] {
      #expect(throws: GatewayRefusal.self) { try GatewayArtifact(bytes: bytes) }
    }
    let notVersion = Self.swu(version: "two", image: try Self.image())
    #expect(throws: GatewayRefusal.format("software.version 'two' is no MCUboot version (1.2.3+4)")) {
      try GatewayArtifact(bytes: notVersion)
    }
  }

  @Test func attributesSayWhatTheDeviceIs() throws {
    let info = InfoRecord(
      state: .idle, runningSlot: .b, flags: [.runningOnTrial],
      slotVersions: SlotPair(
        a: Version(major: 1, minor: 0, revision: 0), b: Version(major: 2, minor: 0, revision: 0)),
      inactiveSlotContent: .good, slotCapacity: 1 << 20, windowCapacity: 4096, maxChunkPayload: 240,
      transfer: TransferStatus(state: .idle, size: 0, crc32: 0, committedOffset: 0),
      transferVersion: Version(major: 2, minor: 0, revision: 0),
      lastOutcome: UpdateOutcome(
        result: .rolledBack, from: Version(major: 1, minor: 0, revision: 0),
        to: Version(major: 3, minor: 0, revision: 0),
        reason: .healthCheckFailed, attemptsUsed: 1))
    let facts = TargetFacts(serial: "sim-7", model: "blueota-sim", hardwareRevision: "1.0", info: info)
    #expect(facts.controllerId == "sim-7")
    #expect(facts.attributes["hw_boardname"] == "blueota-sim")
    #expect(facts.attributes["hw_revision"] == "1.0")
    #expect(facts.attributes["sw_version"] == "2.0.0+0")
    #expect(facts.attributes["running_slot"] == "B")
    #expect(facts.attributes["confirmed"] == "no, on trial")
    #expect(facts.attributes["last_update"] == "1.0.0+0 to 3.0.0+0: rolled back (health check failed)")
    #expect(facts.rolledBack(from: Version(major: 3, minor: 0, revision: 0)))
    #expect(!facts.rolledBack(from: Version(major: 2, minor: 0, revision: 0)))
  }
}
