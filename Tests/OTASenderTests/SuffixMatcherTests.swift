import OTAChecksum
import OTAWire
import Testing

@testable import OTADeltaPlan

/// The suffix array against a plain sort of the suffixes, and the suffix-array matcher's segments:
/// an exact cover, a plan that rebuilds the target through the device's decoder, and the matches a
/// bsdiff-class matcher must find where the rolling-hash one cannot.
@Suite struct SuffixMatcherTests {
  static func naiveSuffixArray(_ bytes: [UInt8]) -> [Int32] {
    (0..<bytes.count).sorted { a, b in bytes[a...].lexicographicallyPrecedes(bytes[b...]) }.map { Int32($0) }
  }

  static let alphabets: [[UInt8]] = [[0], [0, 1], [97, 98, 99], Array(0...255)]

  @Test(arguments: 0..<4)
  func theSuffixArrayIsTheSortedSuffixes(alphabet: Int) {
    let letters = Self.alphabets[alphabet]
    for length in [0, 1, 2, 3, 5, 17, 64, 257, 1000] {
      for seed in 1...5 {
        let random = OperationPlanTests.bytes(length, seed: UInt64(seed * 31 + length))
        let text = random.map { letters[Int($0) % letters.count] }
        #expect(SuffixArray(text).positions == Self.naiveSuffixArray(text), "\(length) bytes, seed \(seed)")
      }
    }
  }

  @Test func theSuffixArrayOfRepetitiveTextsIsSorted() {
    let texts: [[UInt8]] = [
      Array("mississippi".utf8), Array("abracadabra".utf8), [UInt8](repeating: 7, count: 500),
      Array(String(repeating: "abcab", count: 90).utf8), Array(String(repeating: "ba", count: 77).utf8),
      Array((0..<300).map { UInt8(truncatingIfNeeded: 255 - $0) }),
      [UInt8](repeating: 0, count: 100) + [1] + [UInt8](repeating: 0, count: 100),
    ]
    for text in texts {
      #expect(SuffixArray(text).positions == Self.naiveSuffixArray(text), "\(text.prefix(12))")
    }
  }

  /// The longest match a search returns is the longest there is.
  @Test func theIndexFindsTheLongestMatch() {
    let base = OperationPlanTests.bytes(3000, seed: 9).map { $0 % 4 }
    let target = OperationPlanTests.bytes(400, seed: 10).map { $0 % 4 }
    let index = LongestMatchIndex(base: base)
    for position in 0..<target.count {
      var longest = 0
      for start in 0..<base.count {
        var length = 0
        while position + length < target.count, start + length < base.count,
          target[position + length] == base[start + length]
        {
          length += 1
        }
        longest = max(longest, length)
      }
      let found = index.longest(target, at: position)
      if longest >= 2 {
        #expect(found.length == longest, "at \(position)")
        #expect(
          Array(base[found.base..<found.base + found.length])
            == Array(target[position..<position + found.length]))
      }
    }
  }

  static func checkedPlan(_ target: [UInt8], _ base: [UInt8]) throws -> OperationPlan {
    let segments = SuffixMatcher.segments(target: target, base: base)
    var cursor: UInt32 = 0
    for segment in segments {
      #expect(segment.start == cursor && segment.end > segment.start)
      cursor = segment.end
    }
    #expect(Int(cursor) == target.count)
    let plan = try #require(OperationPlan(target: target, base: base, segments: segments))
    if !target.isEmpty {
      let rebuilt = try OperationPlanTests.apply(
        plan, 0..<UInt32(target.count), budget: 495, maxLength: 65_536)
      #expect(rebuilt == target)
    }
    return plan
  }

  static func share(_ plan: OperationPlan) -> Int {
    plan.segments.reduce(0) { total, segment in
      if case .literal = segment.source { return total }
      return total + Int(segment.end - segment.start)
    }
  }

  @Test func edgeCasesRoundTrip() throws {
    let random = OperationPlanTests.bytes(50_000, seed: 3)
    let other = OperationPlanTests.bytes(50_000, seed: 4)
    #expect(SuffixMatcher.segments(target: [], base: random).isEmpty)
    // No base, a tiny base, a tiny target.
    _ = try Self.checkedPlan(random, [])
    _ = try Self.checkedPlan(random, [1, 2, 3])
    _ = try Self.checkedPlan([1, 2, 3], random)
    // Identical: one copy of everything.
    let identical = try Self.checkedPlan(random, random)
    #expect(identical.segments == [DeltaSegment(start: 0, end: 50_000, source: .copy(base: 0))])
    // Unrelated: literal throughout, so nothing on air beyond compressed literals.
    let unrelated = try Self.checkedPlan(random, other)
    #expect(unrelated.segments.allSatisfy { $0.source == .literal })
    // The base larger than the target (a part of it), and smaller (the target grew).
    let part = Array(random[10_000..<30_000])
    let smaller = try Self.checkedPlan(part, random)
    #expect(smaller.segments == [DeltaSegment(start: 0, end: 20_000, source: .copy(base: 10_000))])
    let grown = try Self.checkedPlan(random + other, part)
    #expect(Self.share(grown) >= 20_000)
    // Runs of one byte, in both, of different lengths.
    let zeros = try Self.checkedPlan(
      [UInt8](repeating: 0, count: 9000) + random[..<500], [UInt8](repeating: 0, count: 3000) + other[..<500])
    #expect(Self.share(zeros) >= 9000)
  }

  /// A rebuilt binary: code inserted, an address changed every 64 bytes (no exact run of 64
  /// aligned bytes survives, so the rolling-hash matcher finds little), blocks moved.
  @Test func aBinaryWithShiftedAddressesIsMostlyPatches() throws {
    let base = OperationPlanTests.bytes(200_000, seed: 5)
    var target = base
    target.insert(contentsOf: OperationPlanTests.bytes(700, seed: 6), at: 50_000)
    for index in stride(from: 0, to: target.count, by: 64) { target[index] &+= 3 }
    target += base[120_000..<140_000]
    let plan = try Self.checkedPlan(target, base)
    #expect(Self.share(plan) >= target.count - 2000, "\(Self.share(plan)) of \(target.count) from the base")
    let suffixOnAir = plan.bytesOnAir(window: 32_768, budget: 495, maxLength: 65_536)
    let rolling = try #require(
      OperationPlan(
        target: target, base: base, segments: DeltaMatcher.segments(target: target, base: base)))
    let rollingOnAir = rolling.bytesOnAir(window: 32_768, budget: 495, maxLength: 65_536)
    #expect(suffixOnAir * 4 < rollingOnAir, "suffix \(suffixOnAir) B, rolling hash \(rollingOnAir) B")
    #expect(suffixOnAir < 12_000, "\(suffixOnAir) B on air for \(target.count) B")
  }

  @Test(arguments: 1...6)
  func generatedPairsRoundTrip(seed: Int) throws {
    var base = OperationPlanTests.bytes(4000 + seed * 3000, seed: UInt64(seed))
    if seed.isMultiple(of: 2) { base = base.map { $0 % 3 } }  // repetitive
    var target: [UInt8] = []
    var generator = OperationPlanTests.bytes(64, seed: UInt64(100 + seed)).makeIterator()
    while target.count < base.count, let choice = generator.next() {
      let start = Int(choice) * base.count / 256
      let length = min(base.count - start, 200 + Int(choice) * 7)
      switch choice % 3 {
      case 0: target += base[start..<start + length]
      case 1: target += base[start..<start + length].map { $0 &+ ($0 % 17 == 0 ? 1 : 0) }
      default: target += OperationPlanTests.bytes(length / 4, seed: UInt64(choice))
      }
    }
    _ = try Self.checkedPlan(target, base)
  }

  @Test func theSameImagesGiveTheSameSegments() {
    let base = OperationPlanTests.bytes(30_000, seed: 7)
    var target = base
    target.insert(contentsOf: [1, 2, 3, 4, 5], at: 1234)
    #expect(
      SuffixMatcher.segments(target: target, base: base) == SuffixMatcher.segments(target: target, base: base)
    )
  }
}
