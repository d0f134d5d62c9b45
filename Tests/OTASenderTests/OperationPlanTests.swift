import OTAChecksum
import OTAEngine
import OTAWire
import Testing

@testable import OTADeltaPlan

/// The central's plan: its writes cover any range exactly, fit the write size and the operation
/// limit, produce the target when applied to the base, and are the same every time.
@Suite struct OperationPlanTests {
  static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return UInt8(truncatingIfNeeded: state >> 33)
    }
  }

  static let base = bytes(20_000, seed: 1)
  static let target: [UInt8] = {
    var image = base
    image.insert(contentsOf: bytes(300, seed: 2), at: 7000)
    for index in stride(from: 100, to: image.count, by: 997) { image[index] &+= 1 }
    return image + Array(String(repeating: "a new tail ", count: 200).utf8)
  }()

  /// Applies the plan's writes for `range` to the base the way a device does.
  static func apply(_ plan: OperationPlan, _ range: Range<UInt32>, budget: Int, maxLength: UInt32) throws
    -> [UInt8]
  {
    var output: [UInt8] = []
    var position = range.lowerBound
    while position < range.upperBound {
      let (operation, end) = plan.write(
        from: position, limit: range.upperBound, budget: budget, maxLength: maxLength)
      #expect(operation.encoded.count <= budget, "a write fits the budget")
      #expect(operation.offset == position && operation.end == UInt64(end) && end > position)
      #expect(operation.length <= maxLength)
      let decoded = try DataOperation(bytes: operation.encoded)
      if let bytes = try OperationDecoder.output(of: decoded) {
        output += bytes
      } else if let source = decoded.sourceRange {
        output += try OperationDecoder.output(
          of: decoded, source: Array(plan.base[Int(source.lowerBound)..<Int(source.upperBound)]))
      }
      position = end
    }
    return output
  }

  @Test(arguments: [20, 244, 495])
  func anyRangeIsCoveredExactlyAndRebuildsTheTarget(budget: Int) throws {
    let plan = try #require(OperationPlan.delta(Self.target, base: Self.base))
    let size = UInt32(Self.target.count)
    for range in [0..<size, 6900..<7400, 12_345..<12_346, size - 100..<size] {
      let rebuilt = try Self.apply(plan, range, budget: budget, maxLength: 4096)
      #expect(rebuilt == Array(Self.target[Int(range.lowerBound)..<Int(range.upperBound)]), "\(range)")
    }
  }

  @Test func theSameRangeIsPlannedTheSameWay() {
    // [P-CEN-3]
    let first = OperationPlan.delta(Self.target, base: Self.base)
    let second = OperationPlan.delta(Self.target, base: Self.base)
    #expect(first?.segments == second?.segments)
    let a = first?.write(from: 5000, limit: 9000, budget: 244, maxLength: 65_536)
    let b = second?.write(from: 5000, limit: 9000, budget: 244, maxLength: 65_536)
    #expect(a?.operation == b?.operation && a?.end == b?.end)
  }

  /// The estimate's writes, kept for the transfer, are exactly what computing each again gives,
  /// packed or not; their bytes are the estimate; nothing is kept past `keeping`.
  @Test(arguments: [false, true])
  func theWritesTheEstimateKeepsAreTheOnesTheTransferWouldCompute(packed: Bool) throws {
    let plan = try #require(OperationPlan.delta(Self.target, base: Self.base))
    let window: UInt32 = 4096
    let planned = plan.plannedWrites(
      window: window, budget: 244, maxLength: 4096, packed: packed, keeping: 1 << 20)
    var total = 0
    var count = 0
    for windowStart in stride(from: UInt32(0), to: UInt32(Self.target.count), by: Int(window)) {
      let limit = min(windowStart + window, UInt32(Self.target.count))
      var position = windowStart
      while position < limit {
        let kept = try #require(planned.write(from: position, limit: limit), "a write at \(position)")
        if packed {
          let fresh = plan.packedWrite(from: position, limit: limit, budget: 244, maxLength: 4096)
          #expect(kept.bytes == fresh.bytes && kept.end == fresh.end && kept.operations == fresh.operations)
        } else {
          let fresh = plan.write(from: position, limit: limit, budget: 244, maxLength: 4096)
          #expect(kept.bytes == fresh.operation.encoded && kept.end == fresh.end && kept.operations == 1)
        }
        total += kept.bytes.count
        count += 1
        position = kept.end
      }
    }
    #expect(planned.bytesOnAir == total && planned.keptCount == count)
    #expect(plan.bytesOnAir(window: window, budget: 244, maxLength: 4096, packed: packed) == total)
    // Not kept past the bound: the estimate alone.
    let bounded = plan.plannedWrites(
      window: window, budget: 244, maxLength: 4096, packed: packed, keeping: total / 2)
    #expect(bounded.bytesOnAir == total && bounded.keptCount < count && bounded.keptCount > 0)
    #expect(
      plan.plannedWrites(window: window, budget: 244, maxLength: 4096, packed: packed, keeping: 0).keptCount
        == 0)
    // A start that is not where a write begins is not kept.
    #expect(planned.write(from: 1, limit: window) == nil)
  }

  /// Windows of `largestWindow` where their writes take at most `airPerWindow` bytes, else of
  /// `window`: a run of copies goes in large windows, new bytes in small ones.
  @Test func windowsAreLargeWhereTheyCarryLittle() throws {
    // [P-PHASE-15]
    // 48 KiB: the first 32 KiB the base's own (copies), the last 16 KiB new random bytes.
    let base = Self.bytes(32 * 1024, seed: 5)
    let target = base + Self.bytes(16 * 1024, seed: 6)
    let plan = try #require(OperationPlan.delta(target, base: base))
    let planned = plan.plannedWrites(
      window: 4096, largestWindow: 16384, airPerWindow: 4096, budget: 244, maxLength: 16384, packed: true,
      keeping: 1 << 20)
    #expect(
      planned.windowEnds == [16384, 32768] + stride(from: 36864, through: 49152, by: 4096).map { UInt32($0) })
    #expect(planned.windowEnd(startingAt: 0) == 16384 && planned.windowEnd(startingAt: 16384) == 32768)
    #expect(planned.windowEnd(startingAt: 32768) == 36864 && planned.windowEnd(startingAt: 45056) == 49152)
    // Not where a window starts (a resume from a smaller window's end), or past the end: none.
    #expect(planned.windowEnd(startingAt: 4096) == nil && planned.windowEnd(startingAt: 49152) == nil)
    // The same bytes as fixed windows, within a few writes' framing: the windows change the cut, not the plan.
    let fixed = plan.bytesOnAir(window: 4096, budget: 244, maxLength: 16384, packed: true)
    #expect(planned.bytesOnAir <= fixed)
  }

  @Test func theMatcherFindsWhatTheTargetRepeats() throws {
    let segments = DeltaMatcher.segments(target: Self.target, base: Self.base)
    let reused = segments.reduce(0) { total, segment in
      if case .literal = segment.source { return total }
      return total + Int(segment.end - segment.start)
    }
    // Everything but the 300 inserted bytes and the new tail comes from the base.
    #expect(reused >= Self.base.count - 64, "reused \(reused)")
    let plan = try #require(OperationPlan.delta(Self.target, base: Self.base))
    let onAir = plan.bytesOnAir(window: 32_768, budget: 244, maxLength: 65_536)
    #expect(onAir < 2000, "\(onAir) bytes on air for a \(Self.target.count)-byte image")
  }

  @Test func incompressibleBytesGoRawAndCompressibleOnesDeflated() throws {
    let random = Self.bytes(5000, seed: 9)
    let plan = try #require(OperationPlan.compressed(random))
    #expect(plan.write(from: 0, limit: 5000, budget: 244, maxLength: 65_536).operation.kind == .raw)
    let text = Array(String(repeating: "slot ", count: 1000).utf8)
    let textPlan = try #require(OperationPlan.compressed(text))
    let (operation, end) = textPlan.write(from: 0, limit: 5000, budget: 244, maxLength: 65_536)
    #expect(operation.kind == .deflate && end > 244)
  }

  @Test func blockHashesBecomeCopiesOfTheDevicesBlocks() throws {
    // [P-CEN-12]
    let digest: BlockDigester = { UInt64(truncatingIfNeeded: CRC32.checksum($0)) }
    let running = Self.bytes(4096, seed: 3)
    var target = running
    target.replaceSubrange(1024..<1536, with: Self.bytes(512, seed: 4))
    let hashes = BlockHashes(
      blockSize: 512, hashes: stride(from: 0, to: 4096, by: 512).map { digest(running[$0..<$0 + 512]) })
    let segments = BlockMatcher.segments(target: target, hashes: hashes, runningSize: 4096, digest: digest)
    #expect(
      segments == [
        DeltaSegment(start: 0, end: 1024, source: .copy(base: 0)),
        DeltaSegment(start: 1024, end: 1536, source: .literal),
        DeltaSegment(start: 1536, end: 4096, source: .copy(base: 1536)),
      ])
  }

  /// Blocks that hash alike (a filesystem's empty space) are copied from where they are when the
  /// running image has the same block there, so that the copies join; elsewhere from the first.
  @Test func alikeBlocksAreCopiedFromTheSamePlace() throws {
    // [P-CEN-12]
    let digest: BlockDigester = { UInt64(truncatingIfNeeded: CRC32.checksum($0)) }
    var running = [UInt8](repeating: 0, count: 4096)
    running.replaceSubrange(0..<512, with: Self.bytes(512, seed: 5))
    var target = running
    // Block 1 now holds what block 0 held; block 0 is empty.
    target.replaceSubrange(512..<1024, with: running[0..<512])
    target.replaceSubrange(0..<512, with: [UInt8](repeating: 0, count: 512))
    let hashes = BlockHashes(
      blockSize: 512, hashes: stride(from: 0, to: 4096, by: 512).map { digest(running[$0..<$0 + 512]) })
    let segments = BlockMatcher.segments(target: target, hashes: hashes, runningSize: 4096, digest: digest)
    #expect(
      segments == [
        // Empty, and the running image's block 0 is not: the first empty block, 1.
        DeltaSegment(start: 0, end: 512, source: .copy(base: 512)),
        DeltaSegment(start: 512, end: 1024, source: .copy(base: 0)),
        // Empty where the running image is empty too: one copy of the rest from where it is.
        DeltaSegment(start: 1024, end: 4096, source: .copy(base: 1024)),
      ])
  }
}
