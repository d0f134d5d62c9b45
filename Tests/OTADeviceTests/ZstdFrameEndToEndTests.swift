import OTAChecksum
import OTADeltaPlan
import OTALink
import OTASender
import OTASimulation
import OTASocketLink
import OTAStorage
import OTAWire
import Testing

/// A delta as zstd frames against the running image (features bit 4), end to end over the
/// in-memory link: clean, hostile (loss, reordering, duplicates, flipped bits, disconnects, restarts,
/// power cuts), and with a device or frames that cannot take part.
@Suite struct ZstdFrameEndToEndTests {
  static let capacity = 96 * 1024
  static let newVersion = Version(major: 2, minor: 0, revision: 0)
  static let frameLength: UInt32 = 12 * 1024

  struct Pair {
    let base: [UInt8]
    let image: [UInt8]
    let frames: [DeltaFrame]
  }

  static func pair(seed: UInt64) throws -> Pair {
    let base = DeltaFixture.base(size: 40_000, seed: seed)
    let image = DeltaFixture.edited(base, seed: seed)
    let frames = try #require(DeltaFrame.frames(target: image, base: base, length: frameLength, level: 19))
    return Pair(base: base, image: image, frames: frames)
  }

  func push(
    _ pair: Pair, conditions: LinkConditions, faults: DeviceFaults = DeviceFaults(), seed: UInt64,
    features: Features = .all, frames: [DeltaFrame]? = nil
  ) throws -> (SenderReport, DeviceFixture)? {
    var fixture = DeviceFixture(slotCapacity: Self.capacity, runningImage: pair.base)
    fixture.features = features
    try fixture.recordRunningImage()
    let run = try fixture.push(
      pair.image, version: Self.newVersion, conditions: conditions, faults: faults, seed: seed,
      bases: [BaseImage(bytes: pair.base, name: "v1", frames: frames ?? pair.frames)], powerCutSeed: seed)
    guard let report = run.report else { return nil }
    #expect(Array(fixture.medium.slotBytes(.b).prefix(pair.image.count)) == pair.image, "seed \(seed)")
    #expect(fixture.runningSlotUntouched, "seed \(seed)")
    #expect(run.device?.info().runningVersion == Self.newVersion)
    return (report, fixture)
  }

  @Test func aCleanPushSendsTheFramesAndNothingElse() throws {
    // [P-CEN-14]
    let pair = try Self.pair(seed: 5)
    let (report, _) = try #require(try push(pair, conditions: LinkConditions(mtu: 247), seed: 5))
    #expect(report.transferMode == .delta(base: 0))
    #expect(report.framesSent == pair.frames.count && pair.frames.count == 4)
    // Every data write was a frame's part: the device rebuilt the image from the frames alone.
    #expect(report.framePartsSent == report.chunksSent && report.chunksSent > 0)
    #expect(report.bytesOnAir == report.plannedFrameBytesOnAir, "no loss: exactly the frames' parts")
    let frameBytes = pair.frames.reduce(0) { $0 + $1.bytes.count }
    // The parts' framing: 9 bytes of operation header and 2 of packing per write, nothing else.
    #expect(report.bytesOnAir == UInt64(frameBytes + report.framePartsSent * 11), "\(report.bytesOnAir)")
    // The choice was made on the frames' figure; the operations (resends only) were not estimated.
    #expect(report.plannedBytesOnAir == report.plannedFrameBytesOnAir && report.plannedWritesSent == 0)
    let (operations, _) = try #require(
      try push(
        pair, conditions: LinkConditions(mtu: 247), seed: 5, features: Features.all.subtracting(.zstdFrames)))
    #expect(report.bytesOnAir < operations.bytesOnAir, "frames send less than the operations")
    // [P-CEN-15]
    #expect(report.windowsCommitted <= (pair.image.count + 16383) / 16384, "windows of the whole capacity")
  }

  @Test(arguments: [23, 185, 247, 517])
  func framesOverTheHostileLinkEndWithTheExactImage(mtu: Int) throws {
    // [P-CEN-14] [P-ZSTD-3]
    var framed = 0
    for seed in UInt64(1)...3 {
      let pair = try Self.pair(seed: seed)
      var conditions = LinkConditions.hostile(mtu: mtu)
      conditions.disconnects = 0.004
      guard let (report, _) = try push(pair, conditions: conditions, faults: .hostile, seed: seed) else {
        continue
      }
      framed += report.framesSent
    }
    #expect(framed > 0, "MTU \(mtu): no frame went whole")
  }

  @Test func aDeviceWithoutFramesGetsTheOperations() throws {
    // [P-CEN-14]
    let pair = try Self.pair(seed: 6)
    let (report, _) = try #require(
      try push(
        pair, conditions: LinkConditions(mtu: 247), seed: 6, features: Features.all.subtracting(.zstdFrames)))
    #expect(report.transferMode == .delta(base: 0))
    #expect(report.framesSent == 0 && report.framePartsSent == 0 && report.plannedFrameBytesOnAir == 0)
  }

  @Test func framesThatDoNotCoverTheImageAreNotSent() throws {
    // [P-CEN-14]
    let pair = try Self.pair(seed: 7)
    let (report, _) = try #require(
      try push(pair, conditions: LinkConditions(mtu: 247), seed: 7, frames: Array(pair.frames.dropLast())))
    #expect(report.framesSent == 0 && report.transferMode == .delta(base: 0))
  }

  /// Frames coded against another base than the running image decode to wrong bytes (or not at
  /// all): the WINDOW CRC refuses them and the central falls back, and the image still ends exact.
  @Test func framesAgainstAnotherBaseCostAResendNeverAWrongImage() throws {
    let pair = try Self.pair(seed: 8)
    // The same bytes at other offsets: the frames' matches land on the wrong bytes of the real base.
    let other = Array(pair.base[1000...] + pair.base[..<1000])
    let wrong = try #require(
      DeltaFrame.frames(target: pair.image, base: other, length: Self.frameLength, level: 3))
    let (report, _) = try #require(
      try push(pair, conditions: LinkConditions(mtu: 247), seed: 8, frames: wrong))
    #expect(report.windowFailures > 0)
  }
}
