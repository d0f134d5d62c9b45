import OTAStorageTesting
import OTAWire
import Testing

@testable import OTAStorage

@Suite("MemoryMedium power cuts")
struct MemoryMediumPowerCutTests {
  @Test func afterACutEverythingFailsUntilReboot() throws {
    let medium = MemoryMedium(slotCapacity: 16)
    let writer = try medium.openForWriting(.a)
    try medium.replace("journal", with: [1])
    medium.inject(.powerCut, atOperation: 0)
    #expect(throws: StorageError.powerCut) { try writer.sync() }
    #expect(medium.isPoweredOff)
    let count = medium.operationCount
    #expect(throws: StorageError.powerCut) { try writer.read(at: 0, count: 1) }
    #expect(throws: StorageError.powerCut) { try write([1], at: 0, to: writer) }
    #expect(throws: StorageError.powerCut) { try writer.prepare(forImageOf: 1) }
    #expect(throws: StorageError.powerCut) { try medium.load("journal") }
    #expect(throws: StorageError.powerCut) { try medium.replace("journal", with: [2]) }
    #expect(throws: StorageError.powerCut) { try medium.remove("journal") }
    #expect(throws: StorageError.powerCut) { try medium.moveAside("journal") }
    #expect(throws: StorageError.powerCut) { try medium.openForReading(.b) }
    #expect(throws: StorageError.powerCut) { try medium.openForWriting(.b) }
    #expect(medium.operationCount == count)  // Refused operations never reached the medium.
    medium.reboot(seed: nil)
    #expect(!medium.isPoweredOff)
    #expect(try medium.load("journal") == [1])
    try write([1], at: 0, to: writer)  // Old handles work again, like reopened files.
  }

  @Test func withoutASeedUnsyncedWritesAreLostAndSyncedOnesKept() throws {
    let medium = MemoryMedium(slotCapacity: 2_048)
    medium.fill(.a, with: [UInt8](repeating: 0xAA, count: 2_048))
    let writer = try medium.openForWriting(.b)
    try write(pattern(1_000, seed: 1), at: 10, to: writer)
    try writer.sync()
    try write(pattern(1_000, seed: 2), at: 500, to: writer)
    medium.inject(.powerCut, atOperation: 0)
    #expect(throws: StorageError.powerCut) { try write([1, 2, 3], at: 0, to: writer) }
    medium.reboot(seed: nil)
    var expected = [UInt8](repeating: 0, count: 2_048)
    expected.replaceSubrange(10..<1_010, with: pattern(1_000, seed: 1))
    #expect(medium.slotBytes(.b) == expected)
    #expect(medium.durableSlotBytes(.b) == expected)
    #expect(medium.slotBytes(.a) == [UInt8](repeating: 0xAA, count: 2_048))
  }

  @Test func aCutRecordStepIsNotDone() throws {
    let medium = MemoryMedium(slotCapacity: 0)
    try medium.replace("journal", with: [1])
    medium.inject(.powerCut, atOperation: 0, of: [.recordRename])
    #expect(throws: StorageError.powerCut) { try medium.replace("journal", with: [2]) }
    medium.reboot(seed: nil)
    #expect(try medium.load("journal") == [1])
    #expect(medium.recordNames() == ["journal"])  // The temp file was never made durable in the directory.
  }

  @Test func aRecordReplacedAndDirectorySyncedSurvivesEveryReboot() throws {
    for seed in [nil] + (0..<20).map(UInt64.init) {
      let medium = MemoryMedium(slotCapacity: 0)
      try medium.replace("journal", with: [1])
      try medium.replace("boot", with: [7, 7])
      medium.inject(.powerCut, atOperation: 0)
      #expect(throws: StorageError.powerCut) { try medium.load("journal") }
      medium.reboot(seed: seed)
      #expect(try medium.load("journal") == [1])
      #expect(try medium.load("boot") == [7, 7])
    }
  }

  @Test func aReplaceCutBeforeItsDirectorySyncLeavesOldOrNewNeverAMixture() throws {
    // [P-DISK-2]
    let old = pattern(600, seed: 1)
    let new = pattern(900, seed: 2)
    var outcomes: Set<[UInt8]> = []
    for seed in [nil] + (0..<40).map(UInt64.init) {
      let medium = MemoryMedium(slotCapacity: 0)
      try medium.replace("journal", with: old)
      medium.inject(.powerCut, atOperation: 0, of: [.directorySync])
      #expect(throws: StorageError.powerCut) { try medium.replace("journal", with: new) }
      medium.reboot(seed: seed)
      let loaded = try #require(try medium.load("journal"))
      #expect(loaded == old || loaded == new)
      if seed == nil { #expect(loaded == old) }
      outcomes.insert(loaded)
    }
    #expect(outcomes == [old, new])  // Seeds explore both sides of the unsynced rename.
  }

  /// A sequence of replaces, cut at each of its operations in turn: the record that survives is
  /// always one of the versions written, and never older than the last replace that returned.
  @Test(arguments: [nil, 1, 2, 3, 4, 5, 99] as [UInt64?])
  func aCutAnywhereInASequenceOfReplacesLeavesAWholeVersion(seed: UInt64?) throws {
    let versions = (0..<5).map { pattern(50 + $0 * 37, seed: UInt8($0)) }
    func runSequence(_ medium: MemoryMedium, completed: inout Int) throws {
      for (index, version) in versions.enumerated() {
        try medium.replace("journal", with: version)
        completed = index
      }
    }
    let reference = MemoryMedium(slotCapacity: 0)
    var completed = -1
    try runSequence(reference, completed: &completed)
    let operations = reference.operationCount
    #expect(operations == versions.count * 4)

    for cut in 0..<operations {
      let medium = MemoryMedium(slotCapacity: 0)
      medium.inject(.powerCut, atOperation: cut)
      completed = -1
      #expect(throws: StorageError.powerCut) { try runSequence(medium, completed: &completed) }
      medium.reboot(seed: seed)
      let loaded = try medium.load("journal")
      let index = loaded.flatMap { versions.firstIndex(of: $0) }
      if loaded == nil {
        #expect(completed == -1, "cut \(cut): a completed replace was lost")
      } else {
        let index = try #require(index, "cut \(cut): the record is no version that was written")
        #expect(index >= completed && index <= completed + 1, "cut \(cut): version \(index)")
      }
      #expect(medium.recordNames().allSatisfy { $0.hasPrefix("journal") })
      // After the reboot the store works as before.
      try medium.replace("journal", with: [0xFF])
      #expect(try medium.load("journal") == [0xFF])
    }
  }

  @Test func seededRebootsKeepOnlyBytesThatWereWrittenAndTearAtSectors() throws {
    let capacity = 8 * 512
    let writes: [(offset: Int, bytes: [UInt8])] = [
      (100, [UInt8](repeating: 1, count: 1_500)),
      (1_000, [UInt8](repeating: 2, count: 700)),
      (3_000, [UInt8](repeating: 3, count: 1_000)),
    ]
    let interrupted = (offset: 1_800, bytes: [UInt8](repeating: 4, count: 1_300))
    var sawTorn = false
    var sawAll = false
    var sawNone = false
    for seed in 0..<64 as Range<UInt64> {
      let medium = MemoryMedium(slotCapacity: capacity)
      medium.fill(.a, with: [UInt8](repeating: 0xAA, count: capacity))
      let writer = try medium.openForWriting(.a)
      for write in writes { try OTAStorageTests.write(write.bytes, at: UInt64(write.offset), to: writer) }
      medium.inject(.powerCut, atOperation: 0)
      #expect(throws: StorageError.powerCut) {
        try OTAStorageTests.write(interrupted.bytes, at: UInt64(interrupted.offset), to: writer)
      }
      medium.reboot(seed: seed)
      let bytes = medium.slotBytes(.a)
      #expect(bytes == medium.durableSlotBytes(.a))

      // Every byte is the old one or a value some write put exactly there.
      for (offset, byte) in bytes.enumerated() {
        let allowed =
          [0xAA]
          + (writes + [interrupted]).filter { $0.offset..<$0.offset + $0.bytes.count ~= offset }
          .map { $0.bytes[0] }
        #expect(allowed.contains(byte), "seed \(seed), offset \(offset): \(byte)")
      }
      // Each 512-byte sector of the first write (the only one at its sector 0) is whole or absent.
      let firstSector = Array(bytes[100..<512])
      #expect(Set(firstSector).count == 1)
      // The interrupted write (1_800..<3_100, written last) leaves at most a prefix of its sectors.
      let kept = (1_800..<3_100).map { bytes[$0] == 4 }
      let firstLost = kept.firstIndex(of: false) ?? kept.endIndex
      #expect(!kept[firstLost...].contains(true), "seed \(seed): not a prefix")
      let first = bytes[100..<1_000]
      sawAll = sawAll || first.allSatisfy { $0 == 1 }
      sawNone = sawNone || first.allSatisfy { $0 == 0xAA }
      sawTorn = sawTorn || (first.contains(1) && first.contains(0xAA))
    }
    #expect(sawAll && sawNone && sawTorn)
  }

  @Test func aSeedReplaysTheSameReboot() throws {
    func outcome(seed: UInt64) throws -> [UInt8] {
      let medium = MemoryMedium(slotCapacity: 4_096)
      let writer = try medium.openForWriting(.b)
      for step in 0..<10 { try write(pattern(300, seed: UInt8(step)), at: UInt64(step * 377), to: writer) }
      medium.reboot(seed: seed)
      return medium.slotBytes(.b)
    }
    #expect(try outcome(seed: 12) == outcome(seed: 12))
    #expect(try outcome(seed: 12) != outcome(seed: 13))
  }

  @Test func rebootClearsTheFaultPlan() throws {
    let medium = MemoryMedium(slotCapacity: 8)
    medium.inject(.powerCut, atOperation: 0)
    medium.inject(.ioError, atOperation: 5)
    #expect(throws: StorageError.powerCut) { try medium.openForWriting(.a).sync() }
    medium.reboot(seed: 1)
    #expect(medium.pendingFaultCount == 0)
    let writer = try medium.openForWriting(.a)
    for _ in 0..<10 { try writer.sync() }
  }

  @Test func anInPlaceWriteIsDurableAtItsFdatasyncAndMayBeTornBefore() throws {
    let medium = MemoryMedium(slotCapacity: 0)
    let old = [UInt8](repeating: 1, count: 1024)
    try medium.replace("r", with: old)
    try medium.overwrite("r", at: 256, with: [UInt8](repeating: 2, count: 512))
    medium.reboot(seed: nil)  // Synced: kept.
    let written = Array(old.prefix(256)) + [UInt8](repeating: 2, count: 512) + Array(old.suffix(256))
    #expect(try medium.load("r") == written)
    // Cut at the fdatasync: seeded reboots keep the write whole, lose it, or tear it at the sector
    // bound at 512, never anything else.
    var seen: Set<[UInt8]> = []
    for seed in 0..<64 {
      let medium = MemoryMedium(slotCapacity: 0)
      try medium.replace("r", with: old)
      medium.inject(.powerCut, atOperation: 1)
      #expect(throws: StorageError.powerCut) {
        try medium.overwrite("r", at: 256, with: [UInt8](repeating: 2, count: 512))
      }
      medium.reboot(seed: UInt64(seed))
      let bytes = try #require(try medium.load("r"))
      #expect(bytes.count == 1024)
      let first = bytes[256..<512]
      let second = bytes[512..<768]
      #expect(first.allSatisfy { $0 == first.first } && second.allSatisfy { $0 == second.first })
      seen.insert(bytes)
    }
    #expect(seen.count == 4)  // Lost, kept, and each half alone.
  }
}
