import Glibc
import OTAStorageTesting
import OTASystem
import OTAWire
import Testing

@testable import OTAStorage

@Suite("MemoryMedium faults")
struct MemoryMediumFaultTests {
  @Test func ioErrorAndNoSpaceFailTheOperationAndChangeNothing() throws {
    for (fault, code) in [(MemoryMedium.Fault.ioError, Errno.io), (.noSpace, .noSpace)] {
      let medium = MemoryMedium(slotCapacity: 16)
      let writer = try medium.openForWriting(.a)
      medium.inject(fault, atOperation: 0)
      #expect(throws: StorageError.system(operation: "pwrite", path: "memory:slot-A", errno: code)) {
        try write([1, 2, 3], at: 2, to: writer)
      }
      #expect(medium.slotBytes(.a) == [UInt8](repeating: 0, count: 16))
      #expect(medium.operationCount == 1)
      // One-shot: the next attempt works.
      try write([1, 2, 3], at: 2, to: writer)
      #expect(medium.slotBytes(.a)[2..<5] == [1, 2, 3])
      #expect(medium.pendingFaultCount == 0)
    }
  }

  @Test func shortWriteStoresTheFirstHalf() throws {
    let medium = MemoryMedium(slotCapacity: 16)
    let writer = try medium.openForWriting(.b)
    medium.inject(.shortWrite, atOperation: 0)
    #expect(throws: StorageError.shortWrite(expected: 5, written: 2)) {
      try write([1, 2, 3, 4, 5], at: 10, to: writer)
    }
    #expect(Array(medium.slotBytes(.b)[9..<16]) == [0, 1, 2, 0, 0, 0, 0])
  }

  @Test func shortWriteOfARecordLeavesTheOldRecord() throws {
    let medium = MemoryMedium(slotCapacity: 0)
    try medium.replace("journal", with: [1, 1, 1, 1])
    medium.inject(.shortWrite, atOperation: 0)
    #expect(throws: StorageError.shortWrite(expected: 4, written: 2)) {
      try medium.replace("journal", with: [2, 2, 2, 2])
    }
    #expect(try medium.load("journal") == [1, 1, 1, 1])
    #expect(try medium.load("journal.tmp") == [2, 2])
  }

  @Test func aFaultCanTargetOneKindOfOperation() throws {
    let medium = MemoryMedium(slotCapacity: 16)
    let writer = try medium.openForWriting(.a)
    medium.inject(.ioError, atOperation: 1, of: [.slotSync])  // The second sync from now.
    try write([1], at: 0, to: writer)
    try writer.sync()
    try write([2], at: 1, to: writer)
    _ = try writer.read(at: 0, count: 2)
    #expect(throws: StorageError.system(operation: "fdatasync", path: "memory:slot-A", errno: .io)) {
      try writer.sync()
    }
    #expect(medium.durableSlotBytes(.a).prefix(2) == [1, 0])
    try writer.sync()
    #expect(medium.durableSlotBytes(.a).prefix(2) == [1, 2])
  }

  @Test func atOperationCountsFromTheCurrentCounter() throws {
    let medium = MemoryMedium(slotCapacity: 16)
    let writer = try medium.openForWriting(.a)
    for _ in 0..<5 { _ = try writer.read(at: 0, count: 1) }
    medium.inject(.ioError, atOperation: 2)
    _ = try writer.read(at: 0, count: 1)
    _ = try writer.read(at: 0, count: 1)
    #expect(throws: StorageError.system(operation: "pread", path: "memory:slot-A", errno: .io)) {
      try writer.read(at: 0, count: 1)
    }
    #expect(medium.operationCount == 8)
  }

  @Test func twoFaultsOnOneOperationFireOneAfterTheOther() throws {
    let medium = MemoryMedium(slotCapacity: 16)
    let writer = try medium.openForWriting(.a)
    medium.inject(.noSpace, atOperation: 0)
    medium.inject(.ioError, atOperation: 0)
    #expect(throws: StorageError.system(operation: "fdatasync", path: "memory:slot-A", errno: .noSpace)) {
      try writer.sync()
    }
    #expect(throws: StorageError.system(operation: "fdatasync", path: "memory:slot-A", errno: .io)) {
      try writer.sync()
    }
    try writer.sync()
  }

  @Test(arguments: [
    (MemoryMedium.Operation.recordWrite, "pwrite", "memory:records/journal.tmp"),
    (.recordSync, "fsync", "memory:records/journal.tmp"),
    (.recordRename, "rename", "memory:records/journal.tmp"),
    (.directorySync, "fsync", "memory:records"),
  ])
  func aFailedReplaceStepKeepsTheOldContentVisible(step: MemoryMedium.Operation, call: String, path: String)
    throws
  {
    let medium = MemoryMedium(slotCapacity: 0)
    try medium.replace("journal", with: [1])
    medium.inject(.ioError, atOperation: 0, of: [step])
    #expect(throws: StorageError.system(operation: call, path: path, errno: .io)) {
      try medium.replace("journal", with: [2])
    }
    // Only a failed directory sync comes after the rename, so only then is the new content visible.
    #expect(try medium.load("journal") == (step == .directorySync ? [2] : [1]))
    try medium.replace("journal", with: [3])
    #expect(try medium.load("journal") == [3])
  }

  @Test func loadRemoveAndMoveAsideCanFail() throws {
    let medium = MemoryMedium(slotCapacity: 0)
    try medium.replace("journal", with: [1])
    medium.inject(.ioError, atOperation: 0, of: [.recordLoad])
    #expect(throws: StorageError.system(operation: "read", path: "memory:records/journal", errno: .io)) {
      try medium.load("journal")
    }
    medium.inject(.noSpace, atOperation: 0, of: [.recordUnlink])
    #expect(throws: StorageError.system(operation: "unlink", path: "memory:records/journal", errno: .noSpace))
    {
      try medium.remove("journal")
    }
    medium.inject(.ioError, atOperation: 0, of: [.recordRename])
    #expect(throws: StorageError.system(operation: "rename", path: "memory:records/journal", errno: .io)) {
      try medium.moveAside("journal")
    }
    #expect(try medium.load("journal") == [1])
  }

  @Test func clearFaultsForgetsThePlan() throws {
    let medium = MemoryMedium(slotCapacity: 4)
    medium.inject(.powerCut, atOperation: 0)
    medium.inject(.ioError, atOperation: 3, of: Operation.syncs)
    #expect(medium.pendingFaultCount == 2)
    medium.clearFaults()
    #expect(medium.pendingFaultCount == 0)
    try medium.openForWriting(.a).sync()
    #expect(!medium.isPoweredOff)
  }
}

private typealias Operation = MemoryMedium.Operation
