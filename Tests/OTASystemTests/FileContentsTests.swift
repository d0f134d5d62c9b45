import OTASystem
import OTASystemTesting
import OTATestSupport
import Testing

@Suite("FileContents")
struct FileContentsTests {
  @Test func readsBackWhatWasWrittenWholeAcrossChunks() throws {
    try withTemporaryDirectory { (directory: String) throws in
      let path = directory + "/file"
      let bytes = (0..<(200 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
      try FileSystem.writeFile(path, bytes)
      #expect(try FileSystem.readFile(path) == bytes)
      try FileSystem.writeFile(path, Array("short\n".utf8))
      #expect(try FileSystem.readText(path) == "short\n")
    }
  }

  @Test func readsAProcFileWhoseSizeSaysZero() throws {
    #expect(try FileSystem.readText("/proc/self/comm").isEmpty == false)
  }

  @Test func aMissingFileIsNilOrTheTypedError() throws {
    try withTemporaryDirectory { (directory: String) throws in
      #expect(try FileSystem.readFileIfPresent(directory + "/missing") == nil)
      let error = #expect(throws: SystemError.self) { try FileSystem.readFile(directory + "/missing") }
      #expect(error?.errno == .noSuchFile)
      #expect(error?.operation == "open")
      #expect(FileSystem.exists(directory + "/missing") == false)
      #expect(try FileSystem.kind(ofPath: directory + "/missing") == nil)
    }
  }

  @Test func aFailedReadIsTheTypedErrorAndTheFileIsClosed() throws {
    try withTemporaryDirectory { (directory: String) throws in
      let path = directory + "/file"
      try FileSystem.writeFile(path, [1, 2, 3])
      let trace = SystemCallTrace(rules: [.init(.pread, .fail(.io))])
      let error = trace.run { () -> SystemError? in
        #expect(throws: SystemError.self) { try FileSystem.readFile(path) }
      }
      #expect(error?.errno == .io)
      #expect(trace.entries.map(\.call.name).last == .close)
    }
  }

  @Test func makesDirectoriesWithTheirParentsAndListsThem() throws {
    try withTemporaryDirectory { (directory: String) throws in
      try FileSystem.makeDirectories(directory + "/a/b/c")
      try FileSystem.makeDirectories(directory + "/a/b/c")
      #expect(try FileSystem.kind(ofPath: directory + "/a/b/c") == .directory)
      try FileSystem.writeFile(directory + "/a/z", [])
      try FileSystem.writeFile(directory + "/a/m", [])
      #expect(try FileSystem.directoryEntries(directory + "/a") == ["b", "m", "z"])
      #expect(FileSystem.exists(directory + "/a/m"))
    }
  }

  @Test func aFileInTheWayOfADirectoryIsNotADirectory() throws {
    try withTemporaryDirectory { (directory: String) throws in
      try FileSystem.writeFile(directory + "/file", [])
      let error = #expect(throws: SystemError.self) {
        try FileSystem.makeDirectories(directory + "/file/sub")
      }
      #expect(error?.errno == .notDirectory)
      let listing = #expect(throws: SystemError.self) { try FileSystem.directoryEntries(directory + "/file") }
      #expect(listing?.errno == .notDirectory)
    }
  }

  @Test func removesATreeWithoutFollowingItsLinks() throws {
    try withTemporaryDirectory { (directory: String) throws in
      let outside = directory + "/outside"
      try FileSystem.makeDirectories(outside)
      try FileSystem.writeFile(outside + "/keep", [1])
      let tree = directory + "/tree"
      try FileSystem.makeDirectories(tree + "/sub/deeper")
      try FileSystem.writeFile(tree + "/sub/deeper/file", [2])
      try FileSystem.makeSymbolicLink(tree + "/link", pointingAt: outside)
      try FileSystem.removeTree(tree)
      #expect(FileSystem.exists(tree) == false)
      #expect(try FileSystem.readFile(outside + "/keep") == [1])
      try FileSystem.removeTree(tree)
      try FileSystem.removeTree(outside + "/keep")
      #expect(try FileSystem.directoryEntries(outside) == [])
    }
  }
}
