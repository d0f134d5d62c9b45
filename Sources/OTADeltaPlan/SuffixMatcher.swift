/// A bsdiff-class delta matcher: the base's suffix array finds the longest exact match at a target
/// position; the scan keeps to the current alignment (diagonal: base offset − target offset) while
/// it agrees, and moves to another only for a match clearly longer than the agreement there. Each
/// exact match (anchor) is then stretched both ways over the bytes that mostly agree on its
/// diagonal, which become a patch (differences mostly zero, deflated to little); what no diagonal
/// explains is literal. Deterministic: the same images give the same segments.
///
/// Bounds: time linear in the sizes but for the searches (a binary search of at most
/// `LongestMatchIndex.compareLimit` bytes a step, at a mismatch, and less often after each
/// unsuccessful one); memory about 9 bytes per base byte (the suffix array, its construction's
/// flags and buckets). `OperationPlan.delta` uses it up to `largestBase`, the rolling-hash
/// `DeltaMatcher` above.
public enum SuffixMatcher {
  /// The largest base indexed by suffix array: a 128 MiB image with its MCUboot header and TLVs,
  /// about 1.2 GiB of memory while planning (9 bytes per base byte, 2 for the images; measured: 780
  /// MiB peak for a 96 MiB ext4 pair). A system partition of that size is the common update, and the
  /// rolling-hash matcher's many short segments cost a write each (on the 96 MiB pair 134 030
  /// segments, 4.5 times the suffix matcher's 29 631, and 1.49 times its bytes).
  public static let largestBase = 136 << 20
  /// An exact match shorter than this moves the scan nowhere.
  static let shortestAnchor = 12
  /// A new diagonal must beat the current one's agreement over its length by this many bytes.
  static let switchMargin = 8
  /// After a search finds nothing, the scan steps further each time, up to this many bytes: a
  /// match of `shortestAnchor + largestStep` bytes or more is still found.
  static let largestStep = 32
  /// A copy or patch this short costs more in its own write than it saves: literal instead.
  static let shortestSegment = 32

  /// Segments covering the whole target, in order, with no gaps.
  public static func segments(target: [UInt8], base: [UInt8]) -> [DeltaSegment] {
    guard !target.isEmpty else { return [] }
    guard target.count >= shortestAnchor, base.count >= shortestAnchor else {
      return [DeltaSegment(start: 0, end: UInt32(target.count), source: .literal)]
    }
    let index = LongestMatchIndex(base: base)
    let anchors = scan(target, index)
    let segments = assemble(anchors, target: target, base: base)
    return demoteShort(DeltaMatcher.merged(segments))
  }

  struct Anchor: Equatable {
    var target: Int
    var base: Int
    var length: Int
    var shift: Int { base - target }
  }

  static func scan(_ target: [UInt8], _ index: LongestMatchIndex) -> [Anchor] {
    let base = index.base
    var anchors: [Anchor] = []
    var position = 0
    var covered = 0  // target bytes below this belong to an anchor
    var shift: Int?
    var misses = 0
    func agrees(_ at: Int, _ shift: Int) -> Bool {
      let from = at + shift
      return from >= 0 && from < base.count && target[at] == base[from]
    }
    while position < target.count {
      if let shift, agrees(position, shift) {
        // Riding the current diagonal: no search while it agrees.
        var end = position + 1
        while end < target.count, agrees(end, shift) { end += 1 }
        if end - position >= 8 { misses = 0 }
        position = end
        continue
      }
      let found = index.longest(target, at: position)
      guard found.length >= shortestAnchor else {
        misses += 1
        position += min(largestStep, 1 + misses / 8)
        continue
      }
      var agreement = 0
      if let shift {
        for offset in 0..<min(found.length, LongestMatchIndex.compareLimit)
        where agrees(position + offset, shift) {
          agreement += 1
        }
      }
      guard shift == nil || found.length > agreement + switchMargin else {
        position += 1
        continue
      }
      // A new anchor, grown back over equal bytes not yet taken.
      var start = position
      var from = found.base
      while start > covered, from > 0, target[start - 1] == base[from - 1] {
        start -= 1
        from -= 1
      }
      let anchor = Anchor(target: start, base: from, length: position + found.length - start)
      anchors.append(anchor)
      shift = anchor.shift
      covered = anchor.target + anchor.length
      position = covered
      misses = 0
    }
    return anchors
  }

  /// Copies for the anchors, patches for the bytes each anchor's diagonal explains on either side
  /// (bsdiff's extension: as far as twice the agreeing bytes minus the length is largest), literal
  /// for the rest.
  static func assemble(_ anchors: [Anchor], target: [UInt8], base: [UInt8]) -> [DeltaSegment] {
    var segments: [DeltaSegment] = []
    func append(_ range: Range<Int>, _ source: DeltaSegment.Source) {
      guard !range.isEmpty else { return }
      segments.append(
        DeltaSegment(start: UInt32(range.lowerBound), end: UInt32(range.upperBound), source: source))
    }
    func agrees(_ at: Int, _ shift: Int) -> Bool {
      let from = at + shift
      return from >= 0 && from < base.count && target[at] == base[from]
    }
    var cursor = 0
    var previous: Anchor?
    for next in anchors.map(Optional.some) + [nil] {
      let gapEnd = next?.target ?? target.count
      var forward = 0
      if let previous {
        forward = extent(from: cursor, to: gapEnd, step: 1) { agrees($0, previous.shift) }
      }
      var backward = 0
      if let next {
        backward = extent(from: gapEnd - 1, to: cursor - 1, step: -1) { agrees($0, next.shift) }
      }
      if let previous, let next, forward + backward > gapEnd - cursor {
        // The two stretches overlap: split where the two diagonals together agree most.
        let low = gapEnd - backward
        let high = cursor + forward
        var score = 0
        var best = (score: 0, at: low)
        for at in low..<high {
          score += (agrees(at, previous.shift) ? 1 : 0) - (agrees(at, next.shift) ? 1 : 0)
          if score > best.score { best = (score, at + 1) }
        }
        forward = best.at - cursor
        backward = gapEnd - best.at
      }
      if let previous, forward > 0 {
        append(cursor..<cursor + forward, .patch(base: UInt32(cursor + previous.shift)))
      }
      append(cursor + forward..<gapEnd - backward, .literal)
      if let next {
        if backward > 0 {
          append(gapEnd - backward..<gapEnd, .patch(base: UInt32(gapEnd - backward + next.shift)))
        }
        append(next.target..<next.target + next.length, .copy(base: UInt32(next.base)))
        cursor = next.target + next.length
      }
      previous = next
    }
    return segments
  }

  /// How many positions from `start` (stepping by `step`, stopping before `stop`) to take so that
  /// twice the agreeing positions minus the count is largest.
  private static func extent(from start: Int, to stop: Int, step: Int, _ agrees: (Int) -> Bool) -> Int {
    var agreeing = 0
    var best = (score: 0, count: 0)
    var count = 0
    var at = start
    while at != stop {
      count += 1
      if agrees(at) { agreeing += 1 }
      let score = 2 * agreeing - count
      if score > best.score { best = (score, count) }
      // Far past the best with no hope of catching up: stop.
      if best.score - score > 4096 { break }
      at += step
    }
    return best.count
  }

  /// Copies and patches too short to pay for their own write become literal, and neighbouring
  /// literals one.
  static func demoteShort(_ segments: [DeltaSegment]) -> [DeltaSegment] {
    var result: [DeltaSegment] = []
    for var segment in segments {
      if segment.end - segment.start < shortestSegment { segment.source = .literal }
      if segment.source == .literal, let last = result.last, last.source == .literal {
        result[result.count - 1].end = segment.end
      } else {
        result.append(segment)
      }
    }
    return result
  }
}
