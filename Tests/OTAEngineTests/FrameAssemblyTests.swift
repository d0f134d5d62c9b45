import Testing

@testable import OTAEngine

/// The reassembly of zstd frames from parts: any order, duplicates, and every bound.
@Suite struct FrameAssemblyTests {
  @Test func partsInAnyOrderMakeTheFrameOnce() throws {
    var assembly = FrameAssembly(maxFrameSize: 100, maxBytes: 1000, maxFrames: 2)
    #expect(try assembly.add(target: 0, position: 6, last: true, bytes: [7, 8]) == nil)
    #expect(try assembly.add(target: 0, position: 3, last: false, bytes: [4, 5, 6]) == nil)
    #expect(try assembly.add(target: 0, position: 3, last: false, bytes: [4, 5, 6]) == nil)
    #expect(assembly.heldBytes == 8 && assembly.heldFrames == 1)
    #expect(
      try assembly.add(target: 0, position: 0, last: false, bytes: [1, 2, 3]) == [1, 2, 3, 4, 5, 6, 7, 8])
    #expect(assembly.heldBytes == 0 && assembly.heldFrames == 0)
  }

  @Test func everyBoundIsKept() throws {
    var assembly = FrameAssembly(maxFrameSize: 100, maxBytes: 100, maxFrames: 2)
    #expect(throws: FrameAssembly.Refusal.frameTooLarge(end: 101, limit: 100)) {
      try assembly.add(target: 0, position: 100, last: false, bytes: [1])
    }
    _ = try assembly.add(target: 0, position: 90, last: false, bytes: [1])
    _ = try assembly.add(target: 10, position: 1, last: true, bytes: [2])
    #expect(throws: FrameAssembly.Refusal.full(frames: 2, bytes: 93)) {
      try assembly.add(target: 20, position: 0, last: false, bytes: [1])
    }
    #expect(throws: FrameAssembly.Refusal.full(frames: 2, bytes: 93)) {
      try assembly.add(target: 0, position: 95, last: false, bytes: [1, 2, 3, 4, 5])
    }
    // Past the end the last part set, a last part that moves it, and one below bytes already held.
    #expect(throws: FrameAssembly.Refusal.pastTheLastPart(end: 3, size: 2)) {
      try assembly.add(target: 10, position: 2, last: false, bytes: [1])
    }
    #expect(throws: FrameAssembly.Refusal.pastTheLastPart(end: 1, size: 2)) {
      try assembly.add(target: 10, position: 0, last: true, bytes: [9])
    }
    #expect(throws: FrameAssembly.Refusal.pastTheLastPart(end: 91, size: 50)) {
      try assembly.add(target: 0, position: 49, last: true, bytes: [9])
    }
    assembly.drop(below: 10)
    #expect(assembly.heldFrames == 1 && assembly.heldBytes == 2)
    assembly.dropAll()
    #expect(assembly.heldFrames == 0 && assembly.heldBytes == 0)
  }
}
