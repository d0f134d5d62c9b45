/// The base image indexed for "where does the longest copy of these target bytes start": its suffix
/// array, and where each two-byte prefix's suffixes begin in it (a binary search starts there).
struct LongestMatchIndex {
  let base: [UInt8]
  private let suffixes: [Int32]
  /// `prefixStart[k]` is the first suffix whose first two bytes are at least k (a one-byte suffix
  /// counts as its byte followed by 0, which sorts it first among them, as in the array).
  private let prefixStart: [Int32]
  /// A binary search compares at most this many bytes per step; the match found is then extended
  /// byte by byte. Keeps a search over long equal runs (a filesystem's zeros) from costing their
  /// length at every step.
  static let compareLimit = 256

  init(base: [UInt8]) {
    self.base = base
    suffixes = SuffixArray(base).positions
    var counts = [Int32](repeating: 0, count: 65_537)
    for index in 0..<base.count {
      counts[Self.key(base, index) + 1] += 1
    }
    for key in 1..<counts.count { counts[key] += counts[key - 1] }
    prefixStart = counts
  }

  private static func key(_ bytes: [UInt8], _ index: Int) -> Int {
    Int(bytes[index]) << 8 | (index + 1 < bytes.count ? Int(bytes[index + 1]) : 0)
  }

  /// The base offset and length of the longest prefix of `target[position...]` found in the
  /// base (length 0 when there is none of two bytes or more).
  func longest(_ target: [UInt8], at position: Int) -> (base: Int, length: Int) {
    guard position + 1 < target.count, !base.isEmpty else { return (0, 0) }
    let key = Self.key(target, position)
    var low = Int(prefixStart[key])
    var high = Int(prefixStart[key + 1])
    guard low < high else { return (0, 0) }
    let limit = min(Self.compareLimit, target.count - position)
    // The first suffix not smaller than the target's bytes; the longest match is it or the one
    // before it.
    while low < high {
      let middle = (low + high) / 2
      if lessThanTarget(Int(suffixes[middle]), target, position, limit) {
        low = middle + 1
      } else {
        high = middle
      }
    }
    var best = (base: 0, length: 0)
    for candidate in [low - 1, low]
    where candidate >= Int(prefixStart[key]) && candidate < Int(prefixStart[key + 1]) {
      let start = Int(suffixes[candidate])
      let length = commonLength(start, target, position, limit)
      if length > best.length { best = (start, length) }
    }
    guard best.length == limit else { return best }
    // As long as the target goes on agreeing.
    var length = best.length
    while position + length < target.count, best.base + length < base.count,
      target[position + length] == base[best.base + length]
    {
      length += 1
    }
    return (best.base, length)
  }

  private func lessThanTarget(_ start: Int, _ target: [UInt8], _ position: Int, _ limit: Int) -> Bool {
    let available = min(limit, base.count - start)
    var offset = 0
    while offset < available {
      let a = base[start + offset]
      let b = target[position + offset]
      if a != b { return a < b }
      offset += 1
    }
    // A prefix of the target's bytes sorts before them; all `limit` bytes equal is "not less".
    return available < limit
  }

  private func commonLength(_ start: Int, _ target: [UInt8], _ position: Int, _ limit: Int) -> Int {
    let available = min(limit, base.count - start)
    var length = 0
    while length < available, base[start + length] == target[position + length] { length += 1 }
    return length
  }
}
