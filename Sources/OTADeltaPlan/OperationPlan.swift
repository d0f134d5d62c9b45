import OTAChecksum
import OTAWire

/// What the central sends while data operations are on: the target image cut into segments (see
/// `DeltaSegment`), and for any target range the writes that cover it. A write is a pure function
/// of (start, limit, budget, maximum length): a resend or a resume re-plans the same range the
/// same way, whatever happened before.
public struct OperationPlan: Sendable {
  public let target: [UInt8]
  /// The running image the copies and patches read (empty when there is none).
  public let base: [UInt8]
  public let segments: [DeltaSegment]
  /// Inside a patch segment, a run of equal bytes this long or longer goes as a copy.
  static let shortestCopy = 24

  /// A plan from segments (a matcher's, or block hashes'); nil when they do not cover the target
  /// exactly or read outside the base.
  /// `sourceSize`: the running image's size when the base's bytes are not at hand (block hashes):
  /// then only copies may read it, never patches.
  public init?(target: [UInt8], base: [UInt8], segments: [DeltaSegment], sourceSize: Int? = nil) {
    var cursor: UInt32 = 0
    for segment in segments {
      guard segment.start == cursor, segment.end > segment.start else { return nil }
      switch segment.source {
      case .copy(let from):
        let limit = UInt64(sourceSize ?? base.count)
        guard UInt64(from) + UInt64(segment.end - segment.start) <= limit else { return nil }
      case .patch(let from):
        guard UInt64(from) + UInt64(segment.end - segment.start) <= UInt64(base.count) else { return nil }
      case .literal: break
      }
      cursor = segment.end
    }
    guard Int(cursor) == target.count else { return nil }
    self.target = target
    self.base = base
    self.segments = segments
  }

  /// Compression only: one literal segment.
  public static func compressed(_ target: [UInt8]) -> OperationPlan? {
    OperationPlan(
      target: target, base: [],
      segments: target.isEmpty ? [] : [DeltaSegment(start: 0, end: UInt32(target.count), source: .literal)])
  }

  /// A delta against `base`: the suffix-array matcher up to its size bound (bsdiff-class
  /// matches), the rolling-hash one above it (bounded time and memory at any size).
  public static func delta(_ target: [UInt8], base: [UInt8]) -> OperationPlan? {
    let segments =
      base.count <= SuffixMatcher.largestBase
      ? SuffixMatcher.segments(target: target, base: base) : DeltaMatcher.segments(target: target, base: base)
    return OperationPlan(target: target, base: base, segments: segments)
  }

  /// The next write covering target bytes from `start`, ending at most at `limit`, its encoding at
  /// most `budget` bytes, producing at most `maxLength` bytes. Always covers at least one byte.
  public func write(from start: UInt32, limit: UInt32, budget: Int, maxLength: UInt32) -> (
    operation: DataOperation, end: UInt32
  ) {
    let segment = segments[segmentIndex(containing: start)]
    let end = min(segment.end, limit, UInt32(clamping: UInt64(start) + UInt64(max(1, maxLength))))
    let available = Int(end - start)
    switch segment.source {
    case .copy(let from):
      let source = from + (start - segment.start)
      let operation = DataOperation(offset: start, body: .copy(source: source, length: UInt32(available)))
      return (operation, end)
    case .patch(let from):
      let source = Int(from + (start - segment.start))
      // Where the target still equals the base, a copy says it in 13 bytes at any MTU.
      var same = 0
      while same < available, target[Int(start) + same] == base[source + same] { same += 1 }
      if same >= Self.shortestCopy || same == available {
        let operation = DataOperation(
          offset: start, body: .copy(source: UInt32(source), length: UInt32(same)))
        return (operation, start + UInt32(same))
      }
      let fitted = fit(available: available, budget: budget - DataOperation.overhead(.patch)) { count in
        var differences = [UInt8](repeating: 0, count: count)
        for index in 0..<count {
          differences[index] = target[Int(start) + index] &- base[source + index]
        }
        return RawDeflate.compress(differences)
      }
      if let (count, compressed) = fitted, count > budget - DataOperation.overhead(.raw) {
        let operation = DataOperation(
          offset: start,
          body: .patch(source: UInt32(source), length: UInt32(count), differences: compressed[...]))
        return (operation, start + UInt32(count))
      }
      return literal(from: start, available: available, budget: budget)
    case .literal:
      return literal(from: start, available: available, budget: budget)
    }
  }

  /// The next write of packed operations (features bit 3) from `start`, ending at most at `limit`:
  /// as many operations as fit in `budget` bytes with their lengths, in order, the first always.
  /// A pure function of its arguments, as `write` is: a resend packs the same operations again.
  public func packedWrite(from start: UInt32, limit: UInt32, budget: Int, maxLength: UInt32) -> (
    bytes: [UInt8], end: UInt32, operations: Int
  ) {
    let header = PackedOperations.entryHeaderSize
    var operations: [[UInt8]] = []
    var room = budget
    var end = start
    // Room for one more: the length and the smallest operation that can cover a range (a copy).
    while end < limit, operations.isEmpty || room >= header + DataOperation.overhead(.copy) {
      let (operation, operationEnd) = write(
        from: end, limit: limit, budget: room - header, maxLength: maxLength)
      let encoded = operation.encoded
      guard operations.isEmpty || encoded.count + header <= room else { break }
      operations.append(encoded)
      room -= encoded.count + header
      end = operationEnd
    }
    return (PackedOperations.pack(operations), end, operations.count)
  }

  /// Deflate when it carries more target bytes per write than raw, else raw.
  private func literal(from start: UInt32, available: Int, budget: Int) -> (
    operation: DataOperation, end: UInt32
  ) {
    let rawCount = max(1, min(available, budget - DataOperation.overhead(.raw)))
    let fitted = fit(available: available, budget: budget - DataOperation.overhead(.deflate)) { count in
      RawDeflate.compress(target[Int(start)..<Int(start) + count])
    }
    if let (count, compressed) = fitted, count > rawCount {
      let operation = DataOperation(
        offset: start, body: .deflate(length: UInt32(count), compressed: compressed[...]))
      return (operation, start + UInt32(count))
    }
    let bytes = target[Int(start)..<Int(start) + rawCount]
    return (DataOperation(offset: start, body: .raw(bytes)), start + UInt32(rawCount))
  }

  /// The most target bytes (found in a few deterministic steps) whose compression fits `room`.
  private func fit(available: Int, budget room: Int, _ compress: (Int) -> [UInt8]) -> (Int, [UInt8])? {
    guard room > 0, available > 0 else { return nil }
    var best: (Int, [UInt8])?
    var count = min(available, room * 4)
    for _ in 0..<5 {
      let compressed = compress(count)
      // Incompressible (random bytes, compressed data): no smaller piece will do better.
      if compressed.count >= count { break }
      if compressed.count <= room {
        if best.map({ count > $0.0 }) ?? true { best = (count, compressed) }
        guard count < available else { break }
        // Room to spare: grow in proportion, a little short of the estimate.
        let grown = count * room / max(1, compressed.count) * 15 / 16
        guard grown > count else { break }
        count = min(available, grown)
      } else {
        let shrunk = count * room / compressed.count * 15 / 16
        guard shrunk >= 1, shrunk < count else { break }
        count = shrunk
      }
    }
    return best
  }

  private func segmentIndex(containing offset: UInt32) -> Int {
    var low = 0
    var high = segments.count - 1
    while low < high {
      let middle = (low + high + 1) / 2
      if segments[middle].start <= offset { low = middle } else { high = middle - 1 }
    }
    return low
  }

  /// The data bytes the whole image would take in windows of `window` bytes: the figure a central
  /// compares with the plain transfer's before it chooses.
  public func bytesOnAir(window: UInt32, budget: Int, maxLength: UInt32, packed: Bool = false) -> Int {
    plannedWrites(window: window, budget: budget, maxLength: maxLength, packed: packed, keeping: 0).bytesOnAir
  }

  /// Every write of the whole image as the transfer sends them the first time, window by window:
  /// their bytes on air, the windows' ends, and the writes themselves up to `keeping` bytes of
  /// them, so that the transfer sends what the estimate computed instead of deflating it all again.
  ///
  /// Windows are `window` bytes of the image, or `largestWindow` where its writes take at most
  /// `airPerWindow` bytes: a window costs a WINDOW command, and a link carries one control-point
  /// write per round trip, so a delta's windows of copies (a few writes each) would otherwise be
  /// bound by the round trips, not by the air. Those that carry much stay small, so that a link
  /// that drops every few tens of KB still commits windows between its drops.
  public func plannedWrites(
    window: UInt32, largestWindow: UInt32? = nil, airPerWindow: Int = 0, budget: Int, maxLength: UInt32,
    packed: Bool, keeping: Int
  ) -> PlannedWrites {
    var planned = PlannedWrites(budget: budget, maxLength: maxLength, packed: packed)
    var windowStart: UInt32 = 0
    let size = UInt32(target.count)
    let small = max(1, window)
    let large = max(small, largestWindow ?? small)
    while windowStart < size {
      var windowEnd = Self.end(windowStart, small, size)
      var writes = self.writes(
        from: windowStart, limit: windowEnd, budget: budget, maxLength: maxLength, packed: packed)
      if large > small {
        let largeEnd = Self.end(windowStart, large, size)
        let largeWrites = self.writes(
          from: windowStart, limit: largeEnd, budget: budget, maxLength: maxLength, packed: packed)
        if largeWrites.reduce(0, { $0 + $1.write.bytes.count }) <= airPerWindow {
          windowEnd = largeEnd
          writes = largeWrites
        }
      }
      for (start, write) in writes { planned.add(write, from: start, limit: windowEnd, keeping: keeping) }
      planned.windowEnds.append(windowEnd)
      windowStart = windowEnd
    }
    return planned
  }

  private static func end(_ start: UInt32, _ length: UInt32, _ size: UInt32) -> UInt32 {
    UInt32(min(UInt64(start) + UInt64(length), UInt64(size)))
  }

  /// The writes that cover `[start, limit)`, each with where it starts.
  private func writes(from start: UInt32, limit: UInt32, budget: Int, maxLength: UInt32, packed: Bool)
    -> [(start: UInt32, write: PlannedWrites.Write)]
  {
    var writes: [(UInt32, PlannedWrites.Write)] = []
    var position = start
    while position < limit {
      let next: PlannedWrites.Write
      if packed {
        let (bytes, end, count) = packedWrite(
          from: position, limit: limit, budget: budget, maxLength: maxLength)
        next = PlannedWrites.Write(bytes: bytes, end: end, operations: count)
      } else {
        let (operation, end) = write(from: position, limit: limit, budget: budget, maxLength: maxLength)
        next = PlannedWrites.Write(bytes: operation.encoded, end: end, operations: 1)
      }
      writes.append((position, next))
      position = next.end
    }
    return writes
  }
}

/// A plan's writes at one write size, computed once: each is a pure function of (start, limit,
/// budget, maximum length, packed), so a kept one is exactly what computing it again would give.
public struct PlannedWrites: Sendable {
  public struct Write: Equatable, Sendable {
    public let bytes: [UInt8]
    /// Where the target bytes it covers end.
    public let end: UInt32
    /// How many operations it holds.
    public let operations: Int
  }

  public let budget: Int
  public let maxLength: UInt32
  public let packed: Bool
  public private(set) var bytesOnAir = 0
  /// Where each window of the first pass ends, in order.
  public internal(set) var windowEnds: [UInt32] = []
  /// The writes kept, by where they start and the window end they stop at.
  private var kept: [UInt64: Write] = [:]
  private var keptBytes = 0

  init(budget: Int, maxLength: UInt32, packed: Bool) {
    self.budget = budget
    self.maxLength = maxLength
    self.packed = packed
  }

  public var keptCount: Int { kept.count }

  /// The end of the planned window that starts at `start`; nil when none does (a resume from
  /// elsewhere).
  public func windowEnd(startingAt start: UInt32) -> UInt32? {
    var low = 0
    var high = windowEnds.count
    while low < high {
      let middle = (low + high) / 2
      if windowEnds[middle] <= start { low = middle + 1 } else { high = middle }
    }
    guard low < windowEnds.count else { return nil }
    let previous = low == 0 ? 0 : windowEnds[low - 1]
    return previous == start ? windowEnds[low] : nil
  }

  /// The write from `start` up to `limit`, when it was kept.
  public func write(from start: UInt32, limit: UInt32) -> Write? {
    kept[UInt64(start) << 32 | UInt64(limit)]
  }

  mutating func add(_ write: Write, from start: UInt32, limit: UInt32, keeping: Int) {
    bytesOnAir += write.bytes.count
    guard keptBytes + write.bytes.count <= keeping else { return }
    kept[UInt64(start) << 32 | UInt64(limit)] = write
    keptBytes += write.bytes.count
  }
}
