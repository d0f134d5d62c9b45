import OTAStorage
import OTASystem
import OTASystemTesting
import OTATestSupport
import OTAWire
import Testing

/// Issue 13's "durability paid three times per window", as system calls: a committed window is the
/// slot's fdatasync and the journal's pwrite and fdatasync, never a rename or a directory fsync.
@Suite("The journal in place: the exact calls")
struct InPlaceJournalTraceTests {
  func write(_ bytes: [UInt8], at offset: UInt64, to writer: any SlotWriter) throws(StorageError) {
    let result = bytes.withUnsafeBytes { raw in
      Result { () throws(StorageError) in try writer.write(raw, at: offset) }
    }
    try result.get()
  }

  @Test func eachCommittedWindowIsTwoFlushesAndNoRename() throws {
    try withTemporaryDirectory { directory in
      let slots = FileSlotMedium(
        paths: SlotPair(a: directory + "/a.img", b: directory + "/b.img"), fileCapacity: 64 * 1024)
      let writer = try slots.openForWriting(.b)
      let store = try FileRecordStore(directory: directory + "/state")
      var journal = AlternatingRecord(name: "transfer.journal.inplace", store: store)
      let slot = directory + "/b.img"
      let file = directory + "/state/transfer.journal.inplace"
      #expect(try journal.load() == .missing)

      // PREPARE creates the file once, durably: the classic replace, directory fsynced.
      let creation = SystemCallTrace()
      try creation.run { try journal.write([0]) }
      #expect(creation.lines.contains("rename \(file).tmp"))
      #expect(creation.lines.contains("fsync \(directory)/state"))

      for window in 1...4 {
        let trace = SystemCallTrace()
        try trace.run {
          try write(Array(repeating: UInt8(window), count: 4096), at: UInt64(window - 1) * 4096, to: writer)
          try writer.sync()
          try journal.write([UInt8(window)])
        }
        #expect(
          trace.lines == [
            "pwrite \(slot) 4096", "fdatasync \(slot)",
            "open \(file)", "pwrite \(file) \(RecordCopy.overhead + 1)", "fdatasync \(file)", "close \(file)",
          ], "window \(window)")
        #expect(trace.lines.filter { $0.hasPrefix("fdatasync") || $0.hasPrefix("fsync") }.count == 2)
      }
      var reread = AlternatingRecord(name: "transfer.journal.inplace", store: store)
      #expect(try reread.load() == .present([4]))
      #expect(reread.standing == AlternatingRecord.Position(place: 0, sequence: 5))
    }
  }

  @Test func aFailedFdatasyncIsRetriedAtTheSamePlace() throws {
    try withTemporaryDirectory { directory in
      let store = try FileRecordStore(directory: directory)
      var journal = AlternatingRecord(name: "j", store: store)
      try journal.write([1])  // Place 0, sequence 1.
      let failing = SystemCallTrace(rules: [.init(.fdatasync, .fail(.io))])
      #expect(throws: StorageError.self) { try failing.run { try journal.write([2]) } }
      #expect(journal.standing == AlternatingRecord.Position(place: 0, sequence: 1))
      try journal.write([3])
      #expect(journal.standing == AlternatingRecord.Position(place: 1, sequence: 2))
      var reread = AlternatingRecord(name: "j", store: store)
      #expect(try reread.load() == .present([3]))
    }
  }
}
