import Testing

@testable import OTAEngine

@Suite struct ByteRangesTests {
  /// Random inserts against a plain set of offsets: the two must always agree.
  @Test func agreesWithASetModel() {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<200 {
      var ranges = ByteRanges()
      var model = Set<UInt32>()
      for _ in 0..<30 {
        let start = UInt32.random(in: 0..<200, using: &generator)
        let length = UInt32.random(in: 0..<20, using: &generator)
        ranges.insert(start..<start + length)
        model.formUnion(start..<start + length)
        let probe = UInt32.random(in: 0..<200, using: &generator)
        let probeRange = probe..<probe + UInt32.random(in: 1..<30, using: &generator)
        #expect(ranges.contains(probeRange) == probeRange.allSatisfy(model.contains))
        #expect(ranges.firstGap(in: probeRange) == probeRange.first { !model.contains($0) })
      }
      for (left, right) in zip(ranges.ranges, ranges.ranges.dropFirst()) {
        #expect(left.upperBound < right.lowerBound, "sorted, disjoint, not adjacent")
      }
      let cut = UInt32.random(in: 0..<220, using: &generator)
      ranges.removeAll(below: cut)
      let kept = model.filter { $0 >= cut }
      #expect(ranges.ranges.reduce(0) { $0 + $1.count } == kept.count)
    }
  }

  @Test func overlapsIsAnyByteInCommonNotTouching() {
    var ranges = ByteRanges()
    ranges.insert(10..<20)
    ranges.insert(30..<40)
    #expect(ranges.overlaps(15..<16) && ranges.overlaps(0..<11) && ranges.overlaps(19..<31))
    #expect(!ranges.overlaps(0..<10) && !ranges.overlaps(20..<30) && !ranges.overlaps(40..<50))
    #expect(!ranges.overlaps(15..<15))
  }
}
