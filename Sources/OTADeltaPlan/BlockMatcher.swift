import OTAWire

/// Hashes a block of the target as the device hashes the running slot's (truncated SHA-256, which
/// OTATrust computes: the engine itself links no hash library).
public typealias BlockDigester = @Sendable (ArraySlice<UInt8>) -> UInt64

/// The no-base path: the target cut into the device's blocks; a block whose hash (and length) is
/// one of the running slot's becomes a copy of that block, the rest literals. Adjacent copies of
/// adjacent blocks join. A wrong match costs a failed WINDOW CRC and a resend, never a wrong image.
public enum BlockMatcher {
  public static func segments(
    target: [UInt8], hashes: BlockHashes, runningSize: UInt32, digest: BlockDigester
  )
    -> [DeltaSegment]
  {
    let blockSize = Int(hashes.blockSize)
    guard blockSize > 0, !target.isEmpty else {
      return target.isEmpty ? [] : [DeltaSegment(start: 0, end: UInt32(target.count), source: .literal)]
    }
    var blockAt: [UInt64: Int] = [:]
    for (index, hash) in hashes.hashes.enumerated() where blockAt[hash] == nil { blockAt[hash] = index }
    var segments: [DeltaSegment] = []
    var start = 0
    while start < target.count {
      let end = min(start + blockSize, target.count)
      var source: DeltaSegment.Source = .literal
      let hash = digest(target[start..<end])
      // The block at the same place first: a filesystem's empty blocks all hash alike, and copies
      // of them from where they are join into one copy, where copies of the first such block
      // would each be an operation of their own.
      let here = start / blockSize
      if let index = here < hashes.hashes.count && hashes.hashes[here] == hash ? here : blockAt[hash] {
        let from = UInt64(index) * UInt64(blockSize)
        let length = min(UInt64(blockSize), UInt64(runningSize) &- min(from, UInt64(runningSize)))
        if length == UInt64(end - start) { source = .copy(base: UInt32(from)) }
      }
      append(DeltaSegment(start: UInt32(start), end: UInt32(end), source: source), to: &segments)
      start = end
    }
    return segments
  }

  private static func append(_ segment: DeltaSegment, to segments: inout [DeltaSegment]) {
    guard let last = segments.last else {
      segments.append(segment)
      return
    }
    switch (last.source, segment.source) {
    case (.literal, .literal):
      segments[segments.count - 1].end = segment.end
    case (.copy(let a), .copy(let b)) where UInt64(a) + UInt64(last.end - last.start) == UInt64(b):
      segments[segments.count - 1].end = segment.end
    default:
      segments.append(segment)
    }
  }
}
