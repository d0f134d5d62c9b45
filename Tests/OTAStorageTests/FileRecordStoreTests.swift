import Foundation
import OTASystem
import OTATestSupport
import Testing

@testable import OTAStorage

@Suite("FileRecordStore")
struct FileRecordStoreTests {
  func names(in directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
  }

  @Test func createsItsDirectoryWithParents() throws {
    try withTemporaryDirectory { root in
      let directory = root + "/var/lib/blueota"
      let store = try FileRecordStore(directory: directory)
      var isDirectory: ObjCBool = false
      #expect(FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory))
      #expect(isDirectory.boolValue)
      #expect(try store.load("journal") == nil)
      // Opening an existing directory again is fine.
      _ = try FileRecordStore(directory: directory + "/")
    }
  }

  @Test func refusesAFileWhereTheDirectoryShouldBe() throws {
    try withTemporaryDirectory { root in
      let path = root + "/file"
      #expect(FileManager.default.createFile(atPath: path, contents: Data([1])))
      #expect(throws: StorageError.system(operation: "mkdir", path: path, errno: .notDirectory)) {
        try FileRecordStore(directory: path)
      }
    }
  }

  @Test func replaceLoadsBackExactlyAndLeavesNoTemporaryFile() throws {
    // [P-DISK-2]
    try withTemporaryDirectory { directory in
      let store = try FileRecordStore(directory: directory)
      for bytes in [pattern(100, seed: 1), pattern(3, seed: 2), [], pattern(300_000, seed: 3), [42]] {
        try store.replace("journal", with: bytes)
        #expect(try store.load("journal") == bytes)
        #expect(try names(in: directory) == ["journal"])
      }
    }
  }

  @Test func replaceOverwritesATemporaryFileLeftByACrash() throws {
    try withTemporaryDirectory { directory in
      let store = try FileRecordStore(directory: directory)
      try store.replace("boot", with: [1, 2, 3])
      #expect(FileManager.default.createFile(atPath: directory + "/boot.tmp", contents: Data(count: 5_000)))
      #expect(try store.load("boot") == [1, 2, 3])
      try store.replace("boot", with: [4])
      #expect(try store.load("boot") == [4])
      #expect(try names(in: directory) == ["boot"])
    }
  }

  @Test func removeDeletesAndToleratesAMissingRecord() throws {
    try withTemporaryDirectory { directory in
      let store = try FileRecordStore(directory: directory)
      try store.replace("journal", with: [1])
      try store.replace("other", with: [2])
      try store.remove("journal")
      #expect(try store.load("journal") == nil)
      try store.remove("journal")
      #expect(try names(in: directory) == ["other"])
    }
  }

  @Test func moveAsideKeepsTheDamagedRecordUnderAnotherName() throws {
    // [P-DISK-1]
    try withTemporaryDirectory { directory in
      let store = try FileRecordStore(directory: directory)
      try store.replace("journal", with: [1, 1])
      try store.moveAside("journal")
      #expect(try store.load("journal") == nil)
      #expect(try store.load("journal.damaged") == [1, 1])
      // A newer damaged record replaces the older one; a missing record is fine.
      try store.replace("journal", with: [2, 2])
      try store.moveAside("journal")
      try store.moveAside("journal")
      #expect(try store.load("journal.damaged") == [2, 2])
      #expect(try names(in: directory) == ["journal.damaged"])
    }
  }

  @Test(arguments: [
    "", ".", "..", "a/b", "../journal", "x y", "jörnal", "tab\t", String(repeating: "n", count: 201),
  ])
  func refusesNamesThatCouldLeaveTheDirectory(name: String) throws {
    try withTemporaryDirectory { directory in
      let store = try FileRecordStore(directory: directory)
      let invalid = StorageError.system(operation: "name", path: name, errno: .invalidArgument)
      #expect(throws: invalid) { try store.replace(name, with: [1]) }
      #expect(throws: invalid) { try store.load(name) }
      #expect(throws: invalid) { try store.remove(name) }
      #expect(throws: invalid) { try store.moveAside(name) }
      #expect(try names(in: directory) == [])
    }
  }

  @Test func acceptsTheWholeAllowedAlphabet() throws {
    try withTemporaryDirectory { directory in
      let store = try FileRecordStore(directory: directory)
      let name = "AZaz09._-" + String(repeating: "n", count: 191)
      try store.replace(name, with: [5])
      #expect(try store.load(name) == [5])
    }
  }
}
