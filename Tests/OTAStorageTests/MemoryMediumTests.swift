import Glibc
import OTAStorageTesting
import OTASystem
import OTAWire
import Testing

@testable import OTAStorage

@Suite("MemoryMedium basics")
struct MemoryMediumTests {
  @Test func writesAndReadsBackAtOddOffsets() throws {
    let medium = MemoryMedium(slotCapacity: 4_096)
    let writer = try medium.openForWriting(.b)
    #expect(writer.capacity == 4_096)
    try write(pattern(700, seed: 9), at: 333, to: writer)
    try write([1], at: 4_095, to: writer)
    #expect(try writer.read(at: 333, count: 700) == pattern(700, seed: 9))
    #expect(try medium.openForReading(.b).read(at: 4_094, count: 2) == [0, 1])
    #expect(medium.slotBytes(.a) == [UInt8](repeating: 0, count: 4_096))
    #expect(Array(medium.slotBytes(.b)[333..<1_033]) == pattern(700, seed: 9))
  }

  @Test func refusesOutOfBoundsAndTooLargeWithoutCountingThem() throws {
    let medium = MemoryMedium(slotCapacity: 100)
    let writer = try medium.openForWriting(.a)
    #expect(throws: StorageError.outOfBounds(offset: 99, count: 2, capacity: 100)) {
      try write([1, 2], at: 99, to: writer)
    }
    #expect(throws: StorageError.outOfBounds(offset: .max, count: 1, capacity: 100)) {
      try writer.read(at: .max, count: 1)
    }
    #expect(throws: StorageError.tooLarge(size: 101, capacity: 100)) {
      try writer.prepare(forImageOf: 101)
    }
    #expect(medium.operationCount == 0)
    try writer.prepare(forImageOf: 100)
    #expect(medium.operationCount == 1)
  }

  @Test func slotPairRefusesToWriteTheRunningSlot() throws {
    let medium = MemoryMedium(slotCapacity: 16)
    let pair = SlotAccess(medium: medium)
    #expect(throws: StorageError.runningSlotIsReadOnly("slot B is running")) {
      try pair.openForWriting(.b, running: .b)
    }
    try write([3], at: 0, to: try pair.openForWriting(.a, running: .b))
    #expect(medium.slotBytes(.a).first == 3)
  }

  @Test func countsEveryOperation() throws {
    let medium = MemoryMedium(slotCapacity: 64)
    let writer = try medium.openForWriting(.a)
    #expect(medium.operationCount == 0)  // Opening is not an operation on the medium.
    try write([1], at: 0, to: writer)
    _ = try writer.read(at: 0, count: 1)
    try writer.sync()
    try writer.prepare(forImageOf: 10)
    #expect(medium.operationCount == 4)
    try medium.replace("journal", with: [1])  // Write temp, sync temp, rename, sync directory.
    #expect(medium.operationCount == 8)
    _ = try medium.load("journal")
    #expect(medium.operationCount == 9)
    try medium.moveAside("journal")  // Rename, sync directory.
    #expect(medium.operationCount == 11)
    try medium.remove("journal.damaged")  // Unlink, sync directory.
    #expect(medium.operationCount == 13)
    #expect(throws: StorageError.system(operation: "name", path: "a/b", errno: .invalidArgument)) {
      try medium.replace("a/b", with: [1])
    }
    #expect(medium.operationCount == 13)
  }

  @Test func fillSetsTheDurableContent() throws {
    let medium = MemoryMedium(slotCapacity: 8)
    try write([9, 9, 9, 9, 9, 9, 9, 9], at: 0, to: try medium.openForWriting(.a))
    medium.fill(.a, with: [1, 2, 3])
    #expect(medium.slotBytes(.a) == [1, 2, 3, 0, 0, 0, 0, 0])
    #expect(medium.durableSlotBytes(.a) == [1, 2, 3, 0, 0, 0, 0, 0])
    medium.reboot(seed: 7)  // The overwritten unsynced write is gone for good.
    #expect(medium.slotBytes(.a) == [1, 2, 3, 0, 0, 0, 0, 0])
  }

  @Test func syncMakesWritesDurable() throws {
    let medium = MemoryMedium(slotCapacity: 8)
    let writer = try medium.openForWriting(.b)
    try write([5, 6], at: 3, to: writer)
    #expect(medium.slotBytes(.b) == [0, 0, 0, 5, 6, 0, 0, 0])
    #expect(medium.durableSlotBytes(.b) == [UInt8](repeating: 0, count: 8))
    try writer.sync()
    #expect(medium.durableSlotBytes(.b) == [0, 0, 0, 5, 6, 0, 0, 0])
  }

  @Test func recordsBehaveLikeTheFileStore() throws {
    let medium = MemoryMedium(slotCapacity: 0)
    #expect(try medium.load("journal") == nil)
    try medium.replace("journal", with: [1, 2])
    try medium.replace("journal", with: [3])
    #expect(try medium.load("journal") == [3])
    #expect(medium.recordNames() == ["journal"])
    #expect(medium.durableRecordNames() == ["journal"])
    try medium.moveAside("journal")
    try medium.moveAside("journal")
    #expect(try medium.load("journal.damaged") == [3])
    #expect(medium.recordNames() == ["journal.damaged"])
    try medium.remove("journal.damaged")
    try medium.remove("journal.damaged")
    #expect(medium.recordNames() == [])
  }

  @Test func concurrentWritersAreSerialised() async throws {
    let medium = MemoryMedium(slotCapacity: 1_024)
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<8 {
        group.addTask {
          let writer = try? medium.openForWriting(task.isMultiple(of: 2) ? .a : .b)
          for step in 0..<16 {
            try? writer.map { try write([UInt8(task)], at: UInt64(task * 16 + step), to: $0) }
          }
        }
      }
    }
    #expect(medium.operationCount == 128)
    for task in 0..<8 {
      let bytes = medium.slotBytes(task.isMultiple(of: 2) ? .a : .b)
      #expect(bytes[task * 16..<task * 16 + 16].allSatisfy { $0 == UInt8(task) })
    }
  }
}
