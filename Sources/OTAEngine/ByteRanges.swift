/// A set of byte offsets kept as sorted, disjoint, non-adjacent half-open ranges. The receiver uses it
/// to know which bytes of the open window are stored, whatever order chunks arrive in.
public struct ByteRanges: Equatable, Sendable {
  public private(set) var ranges: [Range<UInt32>] = []

  public init() {}

  public var isEmpty: Bool { ranges.isEmpty }

  /// Adds `range`, merging with every range it touches. In-order arrival costs O(1).
  public mutating func insert(_ range: Range<UInt32>) {
    guard !range.isEmpty else { return }
    if let last = ranges.last, last.upperBound <= range.lowerBound {
      if last.upperBound == range.lowerBound {
        ranges[ranges.count - 1] = last.lowerBound..<range.upperBound
      } else {
        ranges.append(range)
      }
      return
    }
    // First range that ends at or after the new one's start: everything before it stays.
    let first = firstIndex { $0.upperBound >= range.lowerBound }
    var lower = range.lowerBound
    var upper = range.upperBound
    var end = first
    while end < ranges.count, ranges[end].lowerBound <= upper {
      lower = min(lower, ranges[end].lowerBound)
      upper = max(upper, ranges[end].upperBound)
      end += 1
    }
    ranges.replaceSubrange(first..<end, with: [lower..<upper])
  }

  /// Whether every offset of `range` is in the set.
  public func contains(_ range: Range<UInt32>) -> Bool {
    guard !range.isEmpty else { return true }
    let index = firstIndex { $0.upperBound > range.lowerBound }
    guard index < ranges.count else { return false }
    return ranges[index].lowerBound <= range.lowerBound && ranges[index].upperBound >= range.upperBound
  }

  /// The first offset of `range` that is not in the set, or nil when all of it is.
  public func firstGap(in range: Range<UInt32>) -> UInt32? {
    guard !range.isEmpty else { return nil }
    let index = firstIndex { $0.upperBound > range.lowerBound }
    guard index < ranges.count, ranges[index].lowerBound <= range.lowerBound else {
      return range.lowerBound
    }
    let covered = ranges[index].upperBound
    return covered >= range.upperBound ? nil : covered
  }

  /// Forgets every offset below `offset` (the committed part needs no tracking).
  public mutating func removeAll(below offset: UInt32) {
    let keepFrom = firstIndex { $0.upperBound > offset }
    ranges.removeFirst(keepFrom)
    if let first = ranges.first, first.lowerBound < offset {
      ranges[0] = offset..<first.upperBound
    }
  }

  public mutating func removeAll() { ranges.removeAll(keepingCapacity: true) }

  /// Forgets the highest range.
  public mutating func removeLast() { if !ranges.isEmpty { ranges.removeLast() } }

  /// Whether inserting `range` would add a range of its own: it overlaps and touches none.
  /// Whether any byte of `range` is in the set (touching at an end is not overlapping).
  public func overlaps(_ range: Range<UInt32>) -> Bool {
    let index = firstIndex { $0.upperBound > range.lowerBound }
    return index < ranges.count && ranges[index].lowerBound < range.upperBound && !range.isEmpty
  }

  public func isSeparate(_ range: Range<UInt32>) -> Bool {
    let index = firstIndex { $0.upperBound >= range.lowerBound }
    return index == ranges.count || ranges[index].lowerBound > range.upperBound
  }

  /// Binary search: the first index whose range satisfies `predicate` (monotone over the sorted list).
  private func firstIndex(where predicate: (Range<UInt32>) -> Bool) -> Int {
    var low = 0
    var high = ranges.count
    while low < high {
      let middle = (low + high) / 2
      if predicate(ranges[middle]) { high = middle } else { low = middle + 1 }
    }
    return low
  }
}
