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
