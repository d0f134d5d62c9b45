/// The receiver's gaps below the highest byte stored, each with the chunk count at which it opened
/// and last went into a report: what "a gap proven by later offsets" means, counted in chunks.
///
/// A gap is *proven* lost once `threshold` chunks were stored since it opened (the one that opened it
/// included) while it stayed open (TCP's duplicate-ACK reasoning), and it has been open for at
/// least a minimum time (RACK's reordering window): EATT's bearers are served in bursts, so a
/// chunk can arrive dozens of places late but only milliseconds late. Bytes fill gaps in any
/// order; what is left of a gap keeps its age.
public struct MissingRanges: Equatable, Sendable {
  struct Gap: Equatable, Sendable {
    var range: Range<UInt32>
    /// `chunksStored` when the gap opened.
    var openedAt: Int
    /// The time the gap opened (the chunk that opened it arrived).
    var openedTime: Duration
    /// `chunksStored` when it was last reported, if ever.
    var reportedAt: Int?
  }

  private(set) var gaps: [Gap] = []
  /// One past the highest byte stored (or the committed offset when nothing past it is).
  public private(set) var highestStored: UInt32
  /// Chunks stored since this value was made: the clock gaps age by.
  public private(set) var chunksStored = 0
  /// The ranges the last reports named, oldest first (bounded).
  private var recentlyReported: [Range<UInt32>] = []

  public init(from offset: UInt32 = 0) { highestStored = offset }

  /// The open gaps, lowest first.
  public var ranges: [Range<UInt32>] { gaps.map(\.range) }

  /// Forgets everything: nothing past `offset` is stored.
  public mutating func reset(from offset: UInt32) {
    gaps.removeAll(keepingCapacity: true)
    recentlyReported.removeAll()
    highestStored = offset
  }

  /// A chunk's bytes arrived: a jump past the highest stored byte opens a gap, bytes inside a gap
  /// close that part of it.
  public mutating func stored(_ range: Range<UInt32>, at now: Duration = .zero) {
    guard !range.isEmpty else { return }
    if range.lowerBound > highestStored {
      // The chunk that opens a gap is the first one stored past it.
      gaps.append(Gap(range: highestStored..<range.lowerBound, openedAt: chunksStored, openedTime: now))
    }
    chunksStored += 1
    if range.upperBound > highestStored { highestStored = range.upperBound }
    guard !gaps.isEmpty, range.lowerBound < gaps[gaps.count - 1].range.upperBound else { return }
    var kept: [Gap] = []
    kept.reserveCapacity(gaps.count + 1)
    for gap in gaps {
      guard gap.range.overlaps(range) else {
        kept.append(gap)
        continue
      }
      if gap.range.lowerBound < range.lowerBound {
        kept.append(
          Gap(
            range: gap.range.lowerBound..<range.lowerBound, openedAt: gap.openedAt,
            openedTime: gap.openedTime,
            reportedAt: gap.reportedAt))
      }
      if gap.range.upperBound > range.upperBound {
        kept.append(
          Gap(
            range: range.upperBound..<gap.range.upperBound, openedAt: gap.openedAt,
            openedTime: gap.openedTime,
            reportedAt: gap.reportedAt))
      }
    }
    gaps = kept
  }

  /// The committed offset moved to `offset`: nothing below it is missing any more.
  public mutating func removeAll(below offset: UInt32) {
    gaps = gaps.compactMap { gap in
      guard gap.range.upperBound > offset else { return nil }
      var gap = gap
      gap.range = max(gap.range.lowerBound, offset)..<gap.range.upperBound
      return gap
    }
    if highestStored < offset { highestStored = offset }
  }

  /// The gaps proven lost (`threshold` chunks stored since each opened, and open for `minimumAge`
  /// at `now`) that no report named yet, or whose last report was `repeatAfter` chunks ago (the
  /// resend was lost too), lowest first, at most `limit`; they count as reported now.
  public mutating func takeProven(
    threshold: Int, minimumAge: Duration = .zero, now: Duration = .zero, repeatAfter: Int, limit: Int
  ) -> [Range<UInt32>] {
    let clock = chunksStored
    return take(limit: limit) { gap in
      clock - gap.openedAt >= threshold && now - gap.openedTime >= minimumAge
        && gap.reportedAt.map { clock - $0 >= repeatAfter } ?? true
    }
  }

  /// Every gap inside `window`, proven or not (a WINDOW waited out its grace for them), lowest
  /// first, at most `limit`; they count as reported now.
  public mutating func takeAll(in window: Range<UInt32>, limit: Int) -> [Range<UInt32>] {
    take(limit: limit) { $0.range.overlaps(window) }
  }

  private mutating func take(limit: Int, where chosen: (Gap) -> Bool) -> [Range<UInt32>] {
    var out: [Range<UInt32>] = []
    let clock = chunksStored
    for index in gaps.indices where out.count < limit && chosen(gaps[index]) {
      gaps[index].reportedAt = clock
      out.append(gaps[index].range)
    }
    recentlyReported.append(contentsOf: out)
    if recentlyReported.count > Self.recentReportsKept {
      recentlyReported.removeFirst(recentlyReported.count - Self.recentReportsKept)
    }
    return out
  }

  /// How many of the last reported ranges are remembered to recognise a spurious report.
  static let recentReportsKept = 64

  /// A chunk arrived whose bytes were all stored already: if it lies in a range a report named,
  /// the chunk was both late and resent, so that report mistook reordering for loss (TCP's
  /// D-SACK). True once per such range.
  public mutating func isSpuriousReport(_ duplicate: Range<UInt32>) -> Bool {
    guard let index = recentlyReported.firstIndex(where: { $0.overlaps(duplicate) }) else { return false }
    recentlyReported.remove(at: index)
    return true
  }
}
