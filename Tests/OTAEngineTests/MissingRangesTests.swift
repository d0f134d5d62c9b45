import OTAEngine
import Testing

@Suite struct MissingRangesTests {
  /// Stores chunks of 10 bytes starting at each offset given.
  static func store(_ missing: inout MissingRanges, _ offsets: [UInt32]) {
    for offset in offsets { missing.stored(offset..<offset + 10) }
  }

  @Test func aJumpOpensAGapAndTheLateChunkClosesIt() {
    var missing = MissingRanges(from: 100)
    Self.store(&missing, [100, 120, 130])
    #expect(missing.ranges == [110..<120])
    #expect(missing.highestStored == 140)
    Self.store(&missing, [110])
    #expect(missing.ranges.isEmpty)
  }

  @Test func aGapIsProvenOnlyAfterThresholdLaterChunks() {
    var missing = MissingRanges()
    Self.store(&missing, [0, 20])  // 10..<20 opens with the chunk at 20, the first past it
    for index in 0..<14 { Self.store(&missing, [30 + 10 * UInt32(index)]) }
    #expect(
      missing.takeProven(threshold: 16, repeatAfter: 32, limit: 16).isEmpty, "15 later chunks: reordering")
    Self.store(&missing, [170])
    #expect(missing.takeProven(threshold: 16, repeatAfter: 32, limit: 16) == [10..<20])
    // Reported once; again only after 32 more chunks while it stays open.
    for index in 0..<31 { Self.store(&missing, [180 + 10 * UInt32(index)]) }
    #expect(missing.takeProven(threshold: 16, repeatAfter: 32, limit: 16).isEmpty)
    Self.store(&missing, [500])
    #expect(missing.takeProven(threshold: 16, repeatAfter: 32, limit: 16) == [10..<20])
  }

  @Test func whatIsLeftOfAGapKeepsItsAge() {
    var missing = MissingRanges()
    Self.store(&missing, [0, 50])  // 10..<50 open
    Self.store(&missing, [20])
    #expect(missing.ranges == [10..<20, 30..<50])
    for index in 0..<14 { Self.store(&missing, [60 + 10 * UInt32(index)]) }
    // 16 chunks since the gap opened (the ones at 50 and 20 count): both parts are proven.
    #expect(missing.takeProven(threshold: 16, repeatAfter: 32, limit: 1) == [10..<20])
    #expect(missing.takeProven(threshold: 16, repeatAfter: 32, limit: 16) == [30..<50])
  }

  @Test func committingForgetsWhatLiesBelow() {
    var missing = MissingRanges()
    Self.store(&missing, [0, 20, 40])
    missing.removeAll(below: 25)
    #expect(missing.ranges == [30..<40])
    missing.removeAll(below: 100)
    #expect(missing.ranges.isEmpty && missing.highestStored == 100)
    #expect(missing.takeAll(in: 0..<200, limit: 16).isEmpty)
  }

  @Test func takeAllNamesTheGapsOfAWindowProvenOrNot() {
    var missing = MissingRanges()
    Self.store(&missing, [0, 20, 40, 60])
    #expect(missing.takeAll(in: 0..<35, limit: 16) == [10..<20, 30..<40])
    #expect(missing.takeAll(in: 0..<100, limit: 1) == [10..<20])
  }
}
