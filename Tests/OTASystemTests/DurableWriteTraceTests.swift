import OTASystem
import OTASystemTesting
import OTATestSupport
import Testing

@Suite("Durable write: the exact calls")
struct DurableWriteTraceTests {
  @Test func replaceWritesTheTemporaryFileSyncsRenamesAndSyncsTheDirectory() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/state"
      let trace = SystemCallTrace()
      try trace.run { try DurableWrite.replace(path, with: [1, 2, 3, 4, 5]) }
      #expect(
        trace.lines == [
          "open \(path).tmp",
          "pwrite \(path).tmp 5",
          "fsync \(path).tmp",
          "close \(path).tmp",
          "rename \(path).tmp",
          "open \(directory)",
          "fsync \(directory)",
          "close \(directory)",
        ])
      #expect(contents(path) == [1, 2, 3, 4, 5])
      #expect(contents(path + ".tmp") == nil)
    }
  }

  @Test func aFailedFsyncClosesTheTemporaryFileAndLeavesTheOldContent() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/state"
      try DurableWrite.replace(path, with: [9])
      let trace = SystemCallTrace(rules: [.init(.fsync, .fail(.io))])
      #expect(throws: SystemError(operation: "fsync", path: path + ".tmp", errno: .io)) {
        try trace.run { try DurableWrite.replace(path, with: [1, 2]) }
      }
      #expect(
        trace.lines == [
          "open \(path).tmp", "pwrite \(path).tmp 2", "fsync \(path).tmp -> EIO", "close \(path).tmp",
        ])
      #expect(contents(path) == [9])
    }
  }

  @Test func renameSyncsTheTargetDirectory() throws {
    try withTemporaryDirectory { directory in
      try DurableWrite.replace(directory + "/a", with: [7])
      let trace = SystemCallTrace()
      try trace.run { try DurableWrite.rename(directory + "/a", to: directory + "/b") }
      #expect(
        trace.lines == [
          "rename \(directory)/a", "open \(directory)", "fsync \(directory)", "close \(directory)",
        ])
      #expect(contents(directory + "/b") == [7])
    }
  }
}
