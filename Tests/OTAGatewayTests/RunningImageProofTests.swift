import OTAChecksum
import OTAGateway
import OTATestSupport
import OTAWire
import Testing

/// "Already runs the version" is taken from a device only when its Info's running image (size and
/// CRC32, from its boot state) is the artifact's image; its version string alone proves nothing.
struct RunningImageProofTests {
  static let version = Version(major: 2, minor: 0, revision: 0)

  static func facts(size: UInt32, crc: UInt32) -> TargetFacts {
    var info = InfoRecord(
      state: .idle, runningSlot: .a, flags: [],
      slotVersions: SlotPair(a: version, b: .zero),
      inactiveSlotContent: .unknown, slotCapacity: 1 << 20, windowCapacity: 4096, maxChunkPayload: 240,
      transfer: TransferStatus(state: .idle, size: 0, crc32: 0, committedOffset: 0),
      transferVersion: .zero,
      lastOutcome: UpdateOutcome(result: .none, from: .zero, to: .zero, reason: .none, attemptsUsed: 0))
    info.runningImageSize = size
    info.runningImageCRC = crc
    return TargetFacts(serial: "s", model: "m", hardwareRevision: "1", info: info)
  }

  @Test func onlyTheImagesSizeAndCRCProveIt() {
    // [SEC-GW-2]
    let image = SeededGenerator.bytes(3000, seed: 5)
    var crc = CRC32()
    crc.update(image)
    #expect(Self.facts(size: 3000, crc: crc.value).provesItRuns(image))
    #expect(Self.facts(size: 3000, crc: crc.value).runningVersion == Self.version)
    #expect(!Self.facts(size: 3000, crc: crc.value ^ 1).provesItRuns(image), "another image of that size")
    #expect(!Self.facts(size: 2999, crc: crc.value).provesItRuns(image), "another size")
    #expect(!Self.facts(size: 0, crc: 0).provesItRuns(image), "a device that does not say its image")
    #expect(!Self.facts(size: 0, crc: 0).provesItRuns([]), "nor for an empty image")
  }
}
