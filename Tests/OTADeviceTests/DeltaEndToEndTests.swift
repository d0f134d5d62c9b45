import OTAChecksum
import OTADeltaPlan
import OTALink
import OTASender
import OTASimulation
import OTASocketLink
import OTAStorage
import OTATrust
import OTAWire
import Testing

/// Delta and compressed transfers (data operations) over the hostile in-memory link: loss,
/// reordering, duplicates, flipped bits, disconnects, restarts and power cuts. Every run must end
/// with the exact image running, the running slot untouched, and fewer bytes on air than plain.
@Suite struct DeltaEndToEndTests {
  static let capacity = 96 * 1024
  static let newVersion = Version(major: 2, minor: 0, revision: 0)

  func pushDelta(mtu: Int, seed: UInt64, hostile: Bool) throws -> (SenderReport, DeviceFixture, [UInt8])? {
    let base = DeltaFixture.base(size: 40_000, seed: seed)
    let image = DeltaFixture.edited(base, seed: seed)
    let fixture = DeviceFixture(slotCapacity: Self.capacity, runningImage: base)
    try fixture.recordRunningImage()
    var conditions = hostile ? LinkConditions.hostile(mtu: mtu) : LinkConditions(mtu: mtu)
    if hostile { conditions.disconnects = 0.004 }
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: conditions, faults: hostile ? .hostile : DeviceFaults(),
      seed: seed, bases: [BaseImage(bytes: base, name: "v1")], powerCutSeed: seed)
    guard let report = run.report else { return nil }
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image, "MTU \(mtu) seed \(seed)")
    #expect(fixture.runningSlotUntouched, "MTU \(mtu) seed \(seed)")
    #expect(run.device?.info().runningVersion == Self.newVersion)
    return (report, fixture, image)
  }

  @Test(arguments: [23, 185, 247, 517])
  func aDeltaOverTheHostileLinkEndsWithTheExactImage(mtu: Int) throws {
    for seed in UInt64(1)...3 {
      guard let (report, _, image) = try pushDelta(mtu: mtu, seed: seed, hostile: true) else { continue }
      #expect(report.bytesOnAir > 0)
      // Resends (loss, failed windows, resumes) cost bytes, but the first pass was a delta.
      #expect(report.plannedBytesOnAir < UInt64(image.count) / 4, "MTU \(mtu): \(report.plannedBytesOnAir)")
    }
  }

  @Test func aCleanDeltaSendsAFractionOfTheImage() throws {
    // [P-CEN-2]
    let (report, _, image) = try #require(try pushDelta(mtu: 247, seed: 9, hostile: false))
    #expect(report.transferMode == .delta(base: 0))
    #expect(report.bytesOnAir == report.plannedBytesOnAir, "no loss: exactly the plan")
    // Every write went as the estimate computed it: nothing deflated twice.
    #expect(report.plannedWritesSent == report.chunksSent && report.chunksSent > 0)
    // [P-PHASE-15] Windows of the device's whole capacity (16 KiB) where their writes carry no more than a
    // window of chunks (8 KiB): fewer WINDOW round trips than windows of 8 KiB would take.
    #expect(report.windowsCommitted < (image.count + 8191) / 8192, "\(report.windowsCommitted) windows")
    #expect(report.bytesOnAir < UInt64(image.count) / 4)
    print(
      "delta: \(image.count)-byte image, \(report.bytesOnAir) bytes on air, plain \(report.plainBytesOnAir)")
  }

  /// Segments planned before (`otactl delta`) are used as they are: all literal here, so the delta
  /// sends what compression would though the base matches. Segments that do not cover the image
  /// are ignored and the push plans again.
  @Test func segmentsPlannedBeforeAreUsedWhenTheyFit() throws {
    let (planned, _, _) = try #require(try pushDelta(mtu: 247, seed: 9, hostile: false))
    let base = DeltaFixture.base(size: 40_000, seed: 9)
    let image = DeltaFixture.edited(base, seed: 9)
    let size = UInt32(image.count)
    for (segments, given) in [
      ([DeltaSegment(start: 0, end: size, source: .literal)], true),
      ([DeltaSegment(start: 0, end: size - 1, source: .literal)], false),
    ] {
      let fixture = DeviceFixture(slotCapacity: Self.capacity, runningImage: base)
      try fixture.recordRunningImage()
      let run = try fixture.push(
        image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 9,
        bases: [BaseImage(bytes: base, name: "v1", segments: segments)])
      let report = try #require(run.report)
      if given {
        // These bytes do not compress: the literal plan costs more than chunks, which go instead.
        #expect(report.plannedBytesOnAir > planned.plannedBytesOnAir * 2, "\(report.plannedBytesOnAir)")
        #expect(report.transferMode == .plain)
      } else {
        #expect(report.plannedBytesOnAir == planned.plannedBytesOnAir)
        #expect(report.transferMode == .delta(base: 0))
      }
      #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
    }
  }

  @Test(arguments: [185, 247])
  func aCompressedTransferOverTheHostileLinkEndsWithTheExactImage(mtu: Int) throws {
    for seed in UInt64(1)...3 {
      let fixture = DeviceFixture(slotCapacity: Self.capacity)
      let image = DeltaFixture.compressible(size: 50_001, seed: seed)
      var conditions = LinkConditions.hostile(mtu: mtu)
      conditions.disconnects = 0.004
      let run = try fixture.push(
        image, version: Self.newVersion, conditions: conditions, faults: .hostile, seed: seed,
        powerCutSeed: seed)
      guard let report = run.report else { continue }
      #expect(report.transferMode == .compressed)
      #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image, "MTU \(mtu) seed \(seed)")
      #expect(fixture.runningSlotUntouched)
      #expect(report.plannedBytesOnAir < report.plainBytesOnAir / 2)
    }
  }

  /// At MTU 23 a write carries 20 bytes: deflate cannot win that back, so the central sends chunks.
  @Test func operationsThatWouldSendMoreGoAsPlainChunks() throws {
    // [P-CEN-1]
    let fixture = DeviceFixture(slotCapacity: Self.capacity)
    let image = DeltaFixture.compressible(size: 20_000, seed: 8)
    let run = try fixture.push(image, version: Self.newVersion, conditions: LinkConditions(mtu: 23), seed: 8)
    let report = try #require(run.report)
    #expect(report.plannedBytesOnAir >= report.plainBytesOnAir)
    #expect(report.transferMode == .plain)
    #expect(report.bytesOnAir == report.plainBytesOnAir)
    #expect(run.device?.engine.statistics.operationsApplied == 0)
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
  }

  @Test func aBaseThatIsNotTheRunningImageFallsBackToCompression() throws {
    // [P-CEN-2]
    let base = DeltaFixture.base(size: 20_000, seed: 3)
    let image = DeltaFixture.edited(base, seed: 3)
    let fixture = DeviceFixture(slotCapacity: Self.capacity)  // runs another image
    try fixture.recordRunningImage()
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 3,
      bases: [BaseImage(bytes: base, name: "v1")])
    let report = try #require(run.report)
    // Random bytes do not compress: plain chunks, and the image arrives all the same.
    #expect(report.transferMode == .plain)
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
  }

  @Test func fullRefusesOperations() throws {
    // [P-CEN-1]
    let base = DeltaFixture.base(size: 20_000, seed: 4)
    let image = DeltaFixture.edited(base, seed: 4)
    let fixture = DeviceFixture(slotCapacity: Self.capacity, runningImage: base)
    try fixture.recordRunningImage()
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 4,
      sender: SenderConfiguration(version: Self.newVersion, operations: false),
      bases: [BaseImage(bytes: base, name: "v1")])
    let report = try #require(run.report)
    #expect(report.transferMode == .plain)
    #expect(report.bytesOnAir >= UInt64(image.count))
    #expect(run.device?.engine.statistics.operationsApplied == 0)
  }

  @Test func aDryRunChangesNothing() throws {
    let base = DeltaFixture.base(size: 20_000, seed: 5)
    let image = DeltaFixture.edited(base, seed: 5)
    let fixture = DeviceFixture(slotCapacity: Self.capacity, runningImage: base)
    try fixture.recordRunningImage()
    let operations = fixture.medium.operationCount
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 5,
      sender: SenderConfiguration(version: Self.newVersion, dryRun: true),
      bases: [BaseImage(bytes: base, name: "v1")])
    let report = try #require(run.report)
    #expect(report.dryRun && report.transferMode == .delta(base: 0))
    #expect(report.bytesOnAir == 0 && report.plannedBytesOnAir > 0)
    #expect(report.plannedBytesOnAir < report.plainBytesOnAir / 4)
    #expect(run.device?.engine.transfer == nil)
    #expect(fixture.medium.slotBytes(.b).allSatisfy { $0 == 0 })
    _ = operations
  }
}

/// A device never updated: its boot state (the factory state) records a version for slot A but no
/// size. An MCUboot image there says its own length and proves it with its hash: Info announces it,
/// and the first update can already be a delta.
@Suite struct FactoryImageDeltaTests {
  @Test func theFactoryImageIsKnownByItsOwnHeader() throws {
    // [P-INFO-27]
    let payload = DeltaFixture.base(size: 30_000, seed: 21)
    let factory = try MCUbootImageBuilder(version: DeviceFixture.runningVersion, headerSize: 0x20)
      .build(payload: payload)
    let update = try MCUbootImageBuilder(version: Version(major: 2, minor: 0, revision: 0), headerSize: 0x20)
      .build(payload: DeltaFixture.edited(payload, seed: 21))
    let fixture = DeviceFixture(slotCapacity: 64 * 1024, runningImage: factory)
    let host = try fixture.makeHost()
    #expect(host.boot[.a].size == 0, "the factory state records no size")
    let info = host.info()
    #expect(info.runningImageSize == UInt32(factory.count))
    #expect(info.runningImageCRC == CRC32.checksum(factory))
    let run = try fixture.push(
      update, version: Version(major: 2, minor: 0, revision: 0), conditions: LinkConditions(mtu: 247),
      seed: 21,
      bases: [BaseImage(bytes: factory, name: "factory")])
    let report = try #require(run.report)
    #expect(report.transferMode == .delta(base: 0))
    #expect(report.bytesOnAir < UInt64(update.count) / 4)
    #expect(Array(fixture.medium.slotBytes(.b).prefix(update.count)) == update)
  }

  @Test func rawBytesInAFactorySlotAreNotGuessedAt() throws {
    // [P-INFO-27]
    let host = try DeviceFixture(slotCapacity: 8192).makeHost()
    #expect(host.info().runningImageSize == 0)
  }
}
