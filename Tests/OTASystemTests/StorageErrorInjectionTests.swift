import OTAStorage
import OTASystem
import OTASystemTesting
import OTATestSupport
import OTAWire
import Testing

@Suite("Storage through the seam: traced commits, injected failures")
struct StorageErrorInjectionTests {
  func medium(_ directory: String) -> FileSlotMedium {
    FileSlotMedium(paths: SlotPair(a: directory + "/a.img", b: directory + "/b.img"), fileCapacity: 4096)
  }

  func write(_ bytes: [UInt8], at offset: UInt64, to writer: any SlotWriter) throws(StorageError) {
    let result = bytes.withUnsafeBytes { raw in
      Result { () throws(StorageError) in try writer.write(raw, at: offset) }
    }
    try result.get()
  }

  @Test func aWindowCommitIsItsWritesThenOneFdatasync() throws {
    try withTemporaryDirectory { directory in
      let writer = try medium(directory).openForWriting(.b)
      let slot = directory + "/b.img"
      let trace = SystemCallTrace()
      try trace.run {
        try write(Array(repeating: 1, count: 100), at: 0, to: writer)
        try write(Array(repeating: 2, count: 100), at: 100, to: writer)
        try writer.sync()
      }
      #expect(trace.lines == ["pwrite \(slot) 100", "pwrite \(slot) 100", "fdatasync \(slot)"])
      #expect(try writer.read(at: 99, count: 2) == [1, 2])
    }
  }

  @Test func anInjectedNoSpaceIsTheStorageErrorWithItsRemedy() throws {
    try withTemporaryDirectory { directory in
      let writer = try medium(directory).openForWriting(.a)
      let slot = directory + "/a.img"
      let trace = SystemCallTrace(rules: [.init(.pwrite, .fail(.noSpace))])
      let error = #expect(throws: StorageError.self) {
        try trace.run { try write([1, 2, 3], at: 0, to: writer) }
      }
      #expect(error == .system(operation: "pwrite", path: slot, errno: .noSpace))
      #expect(error?.description == "pwrite \(slot): No space left on device (errno 28)")
      #expect(error?.remedy?.contains("is full") == true)
    }
  }

  @Test func anInjectedIOErrorOnTheCommitIsTheStorageError() throws {
    try withTemporaryDirectory { directory in
      let writer = try medium(directory).openForWriting(.a)
      let slot = directory + "/a.img"
      let trace = SystemCallTrace(rules: [.init(.fdatasync, .fail(.io))])
      #expect(throws: StorageError.system(operation: "fdatasync", path: slot, errno: .io)) {
        try trace.run { try writer.sync() }
      }
      let error = StorageError.system(operation: "fdatasync", path: slot, errno: .io)
      #expect(
        error.explanation.hasPrefix("fdatasync \(slot): Input/output error (errno 5): the medium reports"))
    }
  }

  @Test func aWriteTheKernelStopsTakingIsAShortWrite() throws {
    try withTemporaryDirectory { directory in
      let writer = try medium(directory).openForWriting(.a)
      let trace = SystemCallTrace(rules: [.init(.pwrite, .limit(4)), .init(.pwrite, .limit(0))])
      #expect(throws: StorageError.shortWrite(expected: 10, written: 4)) {
        try trace.run { try write(Array(repeating: 7, count: 10), at: 0, to: writer) }
      }
    }
  }

  @Test func aRecordIsWrittenThroughTheDurableWrite() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/record"
      let trace = SystemCallTrace(rules: [.init(.rename, .fail(.readOnlyFileSystem))])
      let error = #expect(throws: StorageError.self) {
        try trace.run { try DurableFile.replace(path, with: [1]) }
      }
      #expect(error == .system(operation: "rename", path: path + ".tmp", errno: .readOnlyFileSystem))
      #expect(error?.remedy?.contains("read-only file system") == true)
    }
  }
}
