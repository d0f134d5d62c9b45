import OTAChecksum
import OTASender
import OTASocketLink
import OTAStorage
import OTATrust
import OTAWire
import Testing

@testable import OTABoot

/// `otad adopt`: a running slot written by hand becomes a delta base. Before it Info says size 0
/// and a push sends everything; after it Info names the slot's bytes, and a central with those
/// bytes as its base sends a delta.
@Suite struct RunningImageAdoptionTests {
  static let capacity = 32 * 1024
  static let newVersion = Version(major: 2, minor: 0, revision: 0)

  /// A factory device whose slot A holds 20 000 raw bytes written by hand (no MCUboot header).
  static func factory() -> (DeviceFixture, [UInt8]) {
    let image = DeltaFixture.base(size: 20_000, seed: 41)
    return (DeviceFixture(slotCapacity: capacity, runningImage: image), image)
  }

  @Test func theWholeSlotAdoptedIsABaseForADelta() throws {
    let (fixture, _) = Self.factory()
    #expect(try fixture.boot().info().runningImageSize == 0, "a slot written by hand is unknown")
    let adopted = try RunningImageAdoption.adopt(
      control: fixture.control, slots: fixture.storage.slots, length: nil, version: nil)
    let slot = fixture.medium.slotBytes(.a)
    #expect(adopted.slot == .a && adopted.length == UInt32(Self.capacity) && !adopted.alreadyKnown)
    #expect(adopted.crc32 == CRC32.checksum(slot.prefix(Self.capacity)))
    // The SHA-256 of the same bytes, read in the same pass (in 1 MiB pieces; here one).
    var whole = IncrementalSHA256()
    whole.update(Array(slot.prefix(Self.capacity)))
    #expect(adopted.sha256 == whole.finalize() && adopted.sha256.count == 32)
    #expect(adopted.version == DeviceFixture.runningVersion)
    let info = try fixture.boot().info()
    #expect(info.runningImageSize == UInt32(Self.capacity) && info.runningImageCRC == adopted.crc32)
    // The next release, pushed with the slot's bytes (the factory image file) as its base.
    let base = Array(slot.prefix(Self.capacity))
    // A byte changed every 997, in place: the slot's size, nearly the slot's bytes.
    var image = base
    for index in stride(from: 100, to: image.count, by: 997) { image[index] &+= 1 }
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 41,
      bases: [BaseImage(bytes: base, name: "factory")])
    let report = try #require(run.report)
    #expect(report.transferMode == .delta(base: 0))
    #expect(report.bytesOnAir < report.plainBytesOnAir / 4)
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
    #expect(fixture.runningSlotUntouched)
  }

  @Test func theImagesOwnLengthAndVersion() throws {
    let (fixture, image) = Self.factory()
    let version = Version(major: 1, minor: 4, revision: 2)
    let adopted = try RunningImageAdoption.adopt(
      control: fixture.control, slots: fixture.storage.slots, length: UInt64(image.count), version: version)
    #expect(adopted.length == UInt32(image.count) && adopted.crc32 == CRC32.checksum(image))
    let info = try fixture.boot().info()
    #expect(info.runningImageSize == UInt32(image.count) && info.runningImageCRC == CRC32.checksum(image))
    #expect(info.runningVersion == version)
  }

  @Test func aKnownImageIsKeptUnlessForced() throws {
    let (fixture, image) = Self.factory()
    try fixture.recordRunningImage()
    let kept = try RunningImageAdoption.adopt(
      control: fixture.control, slots: fixture.storage.slots, length: nil, version: nil)
    #expect(kept.alreadyKnown && kept.length == UInt32(image.count) && kept.sha256.isEmpty)
    #expect(try fixture.boot().info().runningImageSize == UInt32(image.count))
    let forced = try RunningImageAdoption.adopt(
      control: fixture.control, slots: fixture.storage.slots, length: nil, version: nil, force: true)
    #expect(!forced.alreadyKnown && forced.length == UInt32(Self.capacity))
  }

  @Test func refusals() throws {
    let (fixture, _) = Self.factory()
    let slots = fixture.storage.slots
    #expect(
      throws: RunningImageAdoption.Refusal.lengthOutOfRange(requested: 0, slotCapacity: UInt64(Self.capacity))
    ) {
      try RunningImageAdoption.adopt(control: fixture.control, slots: slots, length: 0, version: nil)
    }
    let past = UInt64(Self.capacity + 1)
    #expect(
      throws: RunningImageAdoption.Refusal.lengthOutOfRange(
        requested: past, slotCapacity: UInt64(Self.capacity))
    ) {
      try RunningImageAdoption.adopt(control: fixture.control, slots: slots, length: past, version: nil)
    }
    // Nothing was recorded by a refusal.
    #expect(try fixture.boot().info().runningImageSize == 0)
  }

  /// A running slot on trial may still roll back: adopting it would name as a base what may not
  /// stay. Refused, even with --force, and nothing recorded.
  @Test func aSlotOnTrialIsRefused() throws {
    let (fixture, _) = Self.factory()
    let slots = fixture.storage.slots
    // An update armed in B (as ACTIVATE leaves it), then the boot stage of the restart boots it.
    _ = try fixture.control.update { state in
      state.slots[.b] = BootState.Slot(status: .trial, version: Version(major: 2, minor: 0, revision: 0))
      state.trial = BootState.Trial(slot: .b, attemptsLeft: 3, attemptsAllowed: 3)
    }
    _ = try fixture.control.runBootStage()
    #expect(try fixture.control.current().runningOnTrial)
    #expect(throws: RunningImageAdoption.Refusal.onTrial(.b)) {
      try RunningImageAdoption.adopt(
        control: fixture.control, slots: slots, length: nil, version: nil, force: true)
    }
    #expect(try fixture.control.current()[.b].size == 0 && fixture.control.current()[.a].size == 0)
  }
}
