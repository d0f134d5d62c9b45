/// A run of target bytes and where the device can get them: literal (sent, compressed if that
/// helps), a copy of the running image, or the running image plus byte differences.
public struct DeltaSegment: Equatable, Sendable {
  public enum Source: Equatable, Sendable {
    case literal
    /// Target byte i of the segment is the base's byte `base + i`.
    case copy(base: UInt32)
    /// Target byte i is the base's byte `base + i` plus a difference (mostly zero).
    case patch(base: UInt32)
  }

  public var start: UInt32
  public var end: UInt32
  public var source: Source

  public init(start: UInt32, end: UInt32, source: Source) {
    self.start = start
    self.end = end
    self.source = source
  }
}

/// A simple delta matcher (rsync-style): the base indexed by a rolling hash of every aligned block,
/// the target scanned at every byte; a match is extended both ways, and a gap between two matches
/// on the same diagonal (base offset − target offset) becomes a patch when most of its bytes agree.
/// Deterministic: the same images give the same segments. A bsdiff-class matcher may replace it.
public enum DeltaMatcher {
  public static let blockSize = 32

  /// Segments covering the whole target, in order, with no gaps.
  public static func segments(target: [UInt8], base: [UInt8]) -> [DeltaSegment] {
    let count = target.count
    guard count > 0 else { return [] }
    guard base.count >= blockSize, count >= blockSize else {
      return [DeltaSegment(start: 0, end: UInt32(count), source: .literal)]
    }
    var index: [UInt64: UInt32] = [:]
    index.reserveCapacity(base.count / blockSize)
    var position = 0
    while position + blockSize <= base.count {
      let hash = RollingHash(base[position..<position + blockSize]).value
      if index[hash] == nil { index[hash] = UInt32(position) }
      position += blockSize
    }
    var matches: [(target: Int, base: Int, length: Int)] = []
    var scanned = 0  // target bytes below this are covered by a match or given up on
    var rolling = RollingHash(target[0..<blockSize])
    var p = 0
    while p + blockSize <= count {
      if let candidate = index[rolling.value].map(Int.init),
        target[p..<p + blockSize].elementsEqual(base[candidate..<candidate + blockSize])
      {
        var start = p
        var from = candidate
        while start > scanned, from > 0, target[start - 1] == base[from - 1] {
          start -= 1
          from -= 1
        }
        var end = p + blockSize
        var baseEnd = candidate + blockSize
        while end < count, baseEnd < base.count, target[end] == base[baseEnd] {
          end += 1
          baseEnd += 1
        }
        matches.append((start, from, end - start))
        scanned = end
        p = end
        guard p + blockSize <= count else { break }
        rolling = RollingHash(target[p..<p + blockSize])
        continue
      }
      guard p + blockSize < count else { break }
      rolling.roll(out: target[p], in: target[p + blockSize])
      p += 1
    }
    return assemble(matches, target: target, base: base)
  }

  /// Copies for the matches; for each gap, a patch on a neighbouring match's diagonal when at least
  /// half its bytes agree there, else a literal.
  private static func assemble(
    _ matches: [(target: Int, base: Int, length: Int)], target: [UInt8], base: [UInt8]
  ) -> [DeltaSegment] {
    var segments: [DeltaSegment] = []
    var cursor = 0
    var previousShift: Int?
    for match in matches {
      if match.target > cursor {
        let next = match.base - match.target
        segments.append(
          gap(cursor..<match.target, shifts: [previousShift, next], target: target, base: base))
      }
      segments.append(
        DeltaSegment(
          start: UInt32(match.target), end: UInt32(match.target + match.length),
          source: .copy(base: UInt32(match.base))))
      cursor = match.target + match.length
      previousShift = match.base - match.target
    }
    if cursor < target.count {
      segments.append(gap(cursor..<target.count, shifts: [previousShift], target: target, base: base))
    }
    return merged(segments)
  }

  private static func gap(_ range: Range<Int>, shifts: [Int?], target: [UInt8], base: [UInt8]) -> DeltaSegment
  {
    for case let shift? in shifts {
      let from = range.lowerBound + shift
      guard from >= 0, from + range.count <= base.count else { continue }
      var agreeing = 0
      for offset in 0..<range.count where target[range.lowerBound + offset] == base[from + offset] {
        agreeing += 1
      }
      if agreeing * 2 >= range.count {
        return DeltaSegment(
          start: UInt32(range.lowerBound), end: UInt32(range.upperBound), source: .patch(base: UInt32(from)))
      }
    }
    return DeltaSegment(start: UInt32(range.lowerBound), end: UInt32(range.upperBound), source: .literal)
  }

  /// Neighbours on one diagonal (copy, patch, copy…) become one patch: its differences are zeros
  /// where the copies were, which deflate to almost nothing, and one long operation beats many.
  static func merged(_ segments: [DeltaSegment]) -> [DeltaSegment] {
    var result: [DeltaSegment] = []
    for segment in segments {
      if let last = result.last, let joined = join(last, segment) {
        result[result.count - 1] = joined
      } else {
        result.append(segment)
      }
    }
    return result
  }

  private static func join(_ first: DeltaSegment, _ second: DeltaSegment) -> DeltaSegment? {
    guard let a = diagonalBase(first), let b = diagonalBase(second),
      Int64(a) - Int64(first.start) == Int64(b) - Int64(second.start)
    else { return nil }
    if case .copy = first.source, case .copy = second.source {
      return DeltaSegment(start: first.start, end: second.end, source: first.source)
    }
    return DeltaSegment(start: first.start, end: second.end, source: .patch(base: a))
  }

  private static func diagonalBase(_ segment: DeltaSegment) -> UInt32? {
    switch segment.source {
    case .copy(let base), .patch(let base): base
    case .literal: nil
    }
  }
}

/// A polynomial hash over a fixed-size block that slides one byte at a time.
struct RollingHash {
  static let multiplier: UInt64 = 0x100_0000_01b3
  private(set) var value: UInt64 = 0
  private let outFactor: UInt64

  init(_ block: ArraySlice<UInt8>) {
    for byte in block {
      value = value &* Self.multiplier &+ UInt64(byte) &+ 1
    }
    // The weight of the oldest byte: multiplier^(count − 1).
    var power: UInt64 = 1
    for _ in 1..<max(1, block.count) { power = power &* Self.multiplier }
    outFactor = power
  }

  mutating func roll(out: UInt8, in incoming: UInt8) {
    value = (value &- (UInt64(out) &+ 1) &* outFactor) &* Self.multiplier &+ UInt64(incoming) &+ 1
  }
}
