import OTAChecksum
import OTAEngine
import OTAWire
import Testing

@testable import OTADeltaPlan

/// The central's packed writes (features bit 3): as many operations as fit, in order, the first
/// always; each one the plan's own operation at its position; the same write every time.
@Suite struct PackedWriteTests {
  typealias Plans = OperationPlanTests

  @Test func aPackedWriteHoldsTheOperationsInOrderWithinTheBudget() throws {
    // [P-PACK-1] [P-PACK-5]
    let plan = try #require(OperationPlan.delta(Plans.target, base: Plans.base))
    let budget = 244
    var position: UInt32 = 0
    var writes = 0
    var operations = 0
    var output: [UInt8] = []
    let size = UInt32(Plans.target.count)
    while position < size {
      let (bytes, end, count) = plan.packedWrite(from: position, limit: size, budget: budget, maxLength: 4096)
      #expect(bytes.count <= budget, "a packed write fits the write size")
      #expect(plan.packedWrite(from: position, limit: size, budget: budget, maxLength: 4096).bytes == bytes)
      let entries = try #require(PackedOperations.split(bytes))
      #expect(entries.count == count && count >= 1)
      var covered = position
      for entry in entries {
        let operation = try DataOperation(bytes: Array(entry))
        #expect(operation.offset == covered, "each operation starts where the one before ended")
        // The plan's own operation at that position, cut to what was left of the write.
        covered = UInt32(operation.end)
        if let literal = try OperationDecoder.output(of: operation) {
          output += literal
        } else if let source = operation.sourceRange {
          output += try OperationDecoder.output(
            of: operation, source: Array(Plans.base[Int(source.lowerBound)..<Int(source.upperBound)]))
        }
      }
      #expect(covered == end)
      writes += 1
      operations += count
      position = end
    }
    #expect(output == Plans.target)
    #expect(operations > writes, "short operations share writes")
    // Packed, the whole image takes fewer writes than one operation each.
    var single = 0
    position = 0
    while position < size {
      position = plan.write(from: position, limit: size, budget: budget, maxLength: 4096).end
      single += 1
    }
    #expect(writes < single)
  }

  @Test func theEstimateCountsTheLengths() throws {
    // [P-PACK-1]
    let plan = try #require(OperationPlan.delta(Plans.target, base: Plans.base))
    let packed = plan.bytesOnAir(window: 8192, budget: 244, maxLength: 4096, packed: true)
    var total = 0
    var start: UInt32 = 0
    let size = UInt32(Plans.target.count)
    while start < size {
      let windowEnd = min(start + 8192, size)
      var position = start
      while position < windowEnd {
        let (bytes, end, _) = plan.packedWrite(from: position, limit: windowEnd, budget: 244, maxLength: 4096)
        total += bytes.count
        position = end
      }
      start = windowEnd
    }
    #expect(packed == total)
  }
}
