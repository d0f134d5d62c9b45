import OTADeltaPlan
import OTAEngine
import OTASimulation
import OTASocketLink
import OTATrust
import OTAWire
import Testing

/// The no-base path with BLOCK HASHES (feature bit 2): the central reads the running image's
/// hashes at 4 KiB blocks, page by page, where the one-value characteristic could only give
/// 63 blocks (16 KiB each for half a MiB).
@Suite struct PagedBlockHashTests {
  static let newVersion = Version(major: 2, minor: 0, revision: 0)
  static let digest: BlockDigester = { BlockDigest.truncatedSHA256($0) }
  static let size = 512 * 1024

  /// A filesystem-like update at 4 KiB granularity: one 4 KiB page rewritten in every 16 KiB, so
  /// that the two images share three pages in four but no 16 KiB block.
  static func pagePair(seed: UInt64) -> (base: [UInt8], image: [UInt8]) {
    let base = DeviceFixture.image(size: size, seed: seed)
    var image = base
    for block in stride(from: 0, to: size, by: 16384) {
      let page = block + (block / 16384 % 4) * 4096
      image.replaceSubrange(
        page..<page + 4096, with: DeviceFixture.image(size: 4096, seed: seed &+ 0x1_0000 &+ UInt64(block)))
    }
    return (base, image)
  }

  static func fixture(base: [UInt8], features: Features = .all) throws -> DeviceFixture {
    var fixture = DeviceFixture(slotCapacity: size + 4096, windowCapacity: 64 * 1024, runningImage: base)
    fixture.features = features
    try fixture.recordRunningImage()
    return fixture
  }

  @Test func thePairSharesPagesButNoSixteenKiBBlock() {
    let (base, image) = Self.pagePair(seed: 1)
    let old = Set(stride(from: 0, to: Self.size, by: 16384).map { Self.digest(base[$0..<$0 + 16384]) })
    #expect(
      stride(from: 0, to: Self.size, by: 16384).allSatisfy {
        !old.contains(Self.digest(image[$0..<$0 + 16384]))
      })
    let same = stride(from: 0, to: Self.size, by: 4096).filter {
      base[$0..<$0 + 4096] == image[$0..<$0 + 4096]
    }
    #expect(same.count == 96)
  }

  @Test(arguments: [185, 247])
  func withBitTwoMostPagesGoAsCopies(mtu: Int) throws {
    let (base, image) = Self.pagePair(seed: 2)
    let fixture = try Self.fixture(base: base)
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: mtu), seed: 2, blockDigest: Self.digest
    )
    let report = try #require(run.report)
    #expect(report.transferMode == .blockHashes)
    // 512 KiB in 4 KiB blocks: 128 hashes, in pages of (MTU − 14) / 8.
    let perPage = (mtu - 3 - 11) / 8
    #expect(report.blockSize == 4096 && report.blockHashesRead == 128)
    #expect(report.blockHashRequests == (128 + perPage - 1) / perPage)
    // A quarter of the image is new: the bytes on air are little more than that quarter.
    #expect(report.bytesOnAir < UInt64(image.count) * 3 / 10, "\(report.bytesOnAir) of \(image.count)")
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
    #expect(fixture.runningSlotUntouched)
  }

  /// A slot written by hand that nobody adopted, on a device that requires pairing: Info says
  /// running image size 0, the device hashes its whole slot, and the central reads the blocks that
  /// the new image's size covers (128 of the slot's 129): the first update is copies too. Without
  /// pairing the same push goes whole (nothing to copy from: no oracle).
  @Test(arguments: [true, false])
  func aSlotWrittenByHandGivesItsBlocksOverAnAuthenticatedLink(pairingRequired: Bool) throws {
    // [P-BH-5] [P-CEN-8] [P-CEN-13]
    let (base, image) = Self.pagePair(seed: 5)
    var fixture = DeviceFixture(slotCapacity: Self.size + 4096, windowCapacity: 64 * 1024, runningImage: base)
    fixture.features = .all
    fixture.pairingRequired = pairingRequired
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 5, blockDigest: Self.digest
    )
    let report = try #require(run.report)
    #expect(report.deviceBefore?.runningImageSize == 0)
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
    #expect(fixture.runningSlotUntouched)
    guard pairingRequired else {
      #expect(report.transferMode != .blockHashes && report.blockHashesRead == 0)
      #expect(report.bytesOnAir >= UInt64(image.count) * 9 / 10, "\(report.bytesOnAir) of \(image.count)")
      return
    }
    #expect(report.transferMode == .blockHashes)
    #expect(report.blockSize == 4096 && report.blockHashesRead == 128)
    #expect(report.bytesOnAir < UInt64(image.count) * 3 / 10, "\(report.bytesOnAir) of \(image.count)")
  }

  /// The same with an image as long as the slot, whose last 4 KiB block is short (2 KiB): the
  /// central cannot know that block's length, so it leaves it out and copies the others.
  @Test func theShortLastBlockOfAnUnknownSlotIsLeftOut() throws {
    // [P-CEN-13]
    let size = Self.size + 2048
    let base = DeviceFixture.image(size: size, seed: 6)
    var image = base
    image.replaceSubrange(0..<4096, with: DeviceFixture.image(size: 4096, seed: 7))
    var fixture = DeviceFixture(slotCapacity: size, windowCapacity: 64 * 1024, runningImage: base)
    fixture.features = .all
    fixture.pairingRequired = true
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 6, blockDigest: Self.digest
    )
    let report = try #require(run.report)
    #expect(report.transferMode == .blockHashes)
    // 129 blocks read, the last (2 KiB) left out of the plan.
    #expect(report.blockSize == 4096 && report.blockHashesRead == 128)
    // The changed block and the 2 KiB tail go whole; the rest are copies.
    #expect(report.bytesOnAir < 8192, "\(report.bytesOnAir)")
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
  }

  /// The same pair with a device from before BLOCK HASHES: its 63 hashes are of 16 KiB blocks, none
  /// of which the new image has: the whole image goes.
  @Test func theOneValueListFindsNothingAtSixteenKiB() throws {
    let (base, image) = Self.pagePair(seed: 2)
    let fixture = try Self.fixture(base: base, features: [.missingRanges, .operations])
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 2, blockDigest: Self.digest
    )
    let report = try #require(run.report)
    #expect(report.transferMode != .blockHashes)
    #expect(report.blockSize == 16384 && report.blockHashesRead == 32 && report.blockHashRequests == 0)
    #expect(report.bytesOnAir >= UInt64(image.count))
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
  }

  /// Loss, reordering, disconnects, storage faults and power cuts: a disconnect while paging ends
  /// the paging (the rest goes compressed), anything else keeps the copies; every run ends with
  /// the exact image, the running slot untouched.
  @Test func aHostileLinkAndPowerCutsStillEndWithTheExactImage() throws {
    var copied = 0
    for seed in UInt64(1)...3 {
      let (base, image) = Self.pagePair(seed: seed)
      let fixture = try Self.fixture(base: base)
      var conditions = LinkConditions.hostile(mtu: 247)
      conditions.disconnects = 0.002
      let run = try fixture.push(
        image, version: Self.newVersion, conditions: conditions, faults: .hostile, seed: seed,
        blockDigest: Self.digest, powerCutSeed: seed)
      guard let report = run.report else { continue }
      if report.transferMode == .blockHashes { copied += 1 }
      #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image, "seed \(seed)")
      #expect(fixture.runningSlotUntouched, "seed \(seed)")
    }
    #expect(copied > 0, "at least one hostile run kept its block copies")
  }
}

extension PagedBlockHashTests {
  /// The VM's step 4b in the simulation: a 1 MiB image the device already runs, sent again as
  /// another version, goes as copies of 4 KiB blocks read in 9 pages at MTU 247: a few hundred
  /// bytes on air.
  @Test func theSameMiBAgainGoesAsCopies() throws {
    // [P-CEN-2]
    let image = DeviceFixture.image(size: 1 << 20, seed: 41)
    var fixture = DeviceFixture(slotCapacity: 1 << 20, windowCapacity: 64 * 1024, runningImage: image)
    fixture.features = .all
    try fixture.recordRunningImage()
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 41,
      blockDigest: Self.digest)
    let report = try #require(run.report)
    #expect(report.transferMode == .blockHashes)
    #expect(report.blockSize == 4096 && report.blockHashesRead == 256 && report.blockHashRequests == 9)
    #expect(report.bytesOnAir < 65536, "\(report.bytesOnAir)")
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
  }
}
