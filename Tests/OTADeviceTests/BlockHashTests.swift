import OTAChecksum
import OTADeltaPlan
import OTAEngine
import OTALink
import OTASimulation
import OTASocketLink
import OTATrust
import OTAWire
import Testing

/// The running slot's block hashes (d3df0006-…) and the no-base path that uses them: a device
/// without BLOCK HASHES (feature bit 2), whose centrals read the one value.
@Suite struct BlockHashTests {
  /// A device from before BLOCK HASHES: the central reads the characteristic.
  static let oneValueFeatures: Features = [.missingRanges, .operations]

  static let newVersion = Version(major: 2, minor: 0, revision: 0)
  static let digest: BlockDigester = { BlockDigest.truncatedSHA256($0) }

  /// A filesystem-like update: whole 512-byte blocks changed or moved, the rest as it was.
  static func filesystemPair(seed: UInt64) -> (base: [UInt8], image: [UInt8]) {
    let base = DeltaFixture.base(size: 30_000, seed: seed)
    var image = base
    let fresh = DeviceFixture.image(size: 2048, seed: seed &+ 1)
    image.replaceSubrange(4096..<6144, with: fresh)  // four blocks rewritten
    image.replaceSubrange(20_480..<21_504, with: base[1024..<2048])  // two blocks copied from elsewhere
    image += DeviceFixture.image(size: 700, seed: seed &+ 2)  // a new tail
    return (base, image)
  }

  @Test func theValueHashesEachBlockOfTheRunningImage() throws {
    // [P-GATT-6] [P-HASH-1] [P-HASH-3] [SEC-CHECK-6]
    let fixture = DeviceFixture(slotCapacity: 8192)
    try fixture.recordRunningImage()
    var host = try fixture.makeHost()
    let running = fixture.runningImage
    let value = try BlockHashes(bytes: host.blockHashes().encoded)
    // 3000 bytes: block size 512 (the smallest), 6 blocks, the last one 440 bytes.
    #expect(value.blockSize == 512 && value.hashes.count == 6)
    for (index, hash) in value.hashes.enumerated() {
      let block = running[index * 512..<min(index * 512 + 512, running.count)]
      #expect(hash == BlockDigest.truncatedSHA256(block), "block \(index)")
    }
    // Cached by the running image's identity: a second read does not read the slot again.
    let before = fixture.medium.operationCount
    #expect(host.blockHashes() == value)
    #expect(fixture.medium.operationCount == before)
  }

  /// FIPS 180-2's "abc": SHA-256 ba7816bf 8f01cfea …; its first 8 bytes as a little-endian u64.
  @Test func theHashIsSHA256TruncatedToEightBytes() {
    // [SEC-CHECK-6]
    #expect(BlockDigest.truncatedSHA256(Array("abc".utf8)) == 0xEACF_018F_BF16_78BA)
  }

  @Test func aDeviceThatKnowsNoRunningImageListsNoBlocks() throws {
    // [P-HASH-3]
    var host = try DeviceFixture(slotCapacity: 8192).makeHost()
    #expect(host.blockHashes().encoded == [0, 0, 0, 0, 0, 0, 0, 0])
  }

  @Test(arguments: [185, 247])
  func withoutABaseTheBlocksTheDeviceHasGoAsCopies(mtu: Int) throws {
    for seed in UInt64(1)...3 {
      let (base, image) = Self.filesystemPair(seed: seed)
      var fixture = DeviceFixture(slotCapacity: 64 * 1024, runningImage: base)
      fixture.features = Self.oneValueFeatures
      try fixture.recordRunningImage()
      var conditions = LinkConditions.hostile(mtu: mtu)
      conditions.disconnects = 0.004
      let run = try fixture.push(
        image, version: Self.newVersion, conditions: conditions, faults: .hostile, seed: seed,
        blockDigest: Self.digest, powerCutSeed: seed)
      guard let report = run.report else { continue }
      #expect(report.transferMode == .blockHashes, "MTU \(mtu) seed \(seed)")
      #expect(report.blockSize == 512 && report.blockHashesRead == 59 && report.blockHashRequests == 0)
      #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image, "MTU \(mtu) seed \(seed)")
      #expect(fixture.runningSlotUntouched)
      // 2048 + 700 new bytes (random) and a few copies: far below the 33 KB image.
      #expect(report.plannedBytesOnAir < 4000, "planned \(report.plannedBytesOnAir)")
    }
  }

  /// A hash that matches wrongly (here: a central whose digest says every block matches the
  /// device's first) makes copies of the wrong bytes: the WINDOW's CRC fails, and after the second
  /// failure of the same window the rest goes as compressed literals. A resend, never a wrong image.
  @Test func aWrongMatchCostsAResendNeverAWrongImage() throws {
    // [P-HASH-4] [P-CEN-4]
    let (base, image) = Self.filesystemPair(seed: 7)
    var fixture = DeviceFixture(slotCapacity: 64 * 1024, runningImage: base)
    fixture.features = Self.oneValueFeatures
    try fixture.recordRunningImage()
    let firstBlock = BlockDigest.truncatedSHA256(base[0..<512])
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 7,
      blockDigest: { _ in firstBlock })
    let report = try #require(run.report)
    #expect(report.windowFailures >= 2)
    #expect(report.transferMode == .compressed, "fell back from block copies")
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
    #expect(fixture.runningSlotUntouched)
  }
}
