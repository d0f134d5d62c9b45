import Foundation
import OTAStorage
import OTASystem
import OTATestSupport
import OTAWire
import Testing

@testable import OTABoot

@Suite("FileLinkBackend")
struct FileLinkBackendTests {
  func backend(in directory: String) -> FileLinkBackend {
    FileLinkBackend(
      link: directory + "/current",
      slotPaths: SlotPair(a: directory + "/slot-a.img", b: directory + "/slot-b.img"))
  }

  func linkTarget(_ path: String) throws -> String {
    try FileManager.default.destinationOfSymbolicLink(atPath: path)
  }

  @Test func followsTrialCountdownConfirmAndRollback() throws {
    try withTemporaryDirectory { directory in
      let backend = backend(in: directory)
      let link = backend.link
      #expect(backend.target() == nil)

      // A trial of B over A: the link names B at once (otad itself falls back on a failed trial).
      try backend.apply(BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 3)))
      #expect(try linkTarget(link) == directory + "/slot-b.img")
      #expect(backend.target() == .b)
      let afterTrial = try identity(of: link)

      // Counting down and confirming B change nothing on disk.
      try backend.apply(BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 2)))
      try backend.apply(BootPlan(primary: .b))
      #expect(try identity(of: link) == afterTrial)
      #expect(backend.target() == .b)

      // A rollback after a trial of B points back at A.
      try backend.apply(BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 1)))
      try backend.apply(BootPlan(primary: .a))
      #expect(try linkTarget(link) == directory + "/slot-a.img")
      #expect(backend.target() == .a)
      #expect(
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [
          "current", "current.primary",
        ])
    }
  }

  @Test func thePrimaryLinkTellsTheConfirmedSlotWhileATrialRuns() throws {
    try withTemporaryDirectory { directory in
      let backend = backend(in: directory)
      #expect(try backend.pointer() == .unknown, "nothing applied yet")
      try backend.apply(BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 3)))
      #expect(try backend.pointer() == BootPointer(primary: .a, trial: .b))
      try backend.apply(BootPlan(primary: .b))
      #expect(try backend.pointer() == BootPointer(primary: .b))
      // An install older than the primary link: only the link, read as the slot that starts.
      try FileManager.default.removeItem(atPath: backend.primaryLink)
      #expect(try backend.pointer() == BootPointer(booted: .b))
    }
  }

  @Test func applyingTheSamePlanTwiceWritesNothing() throws {
    try withTemporaryDirectory { directory in
      let backend = backend(in: directory)
      try backend.apply(BootPlan(primary: .a))
      let first = try identity(of: backend.link)
      try backend.apply(BootPlan(primary: .a))
      #expect(try identity(of: backend.link) == first)
    }
  }

  @Test func replacesALinkToSomethingElseAndATemporaryLeftByACrash() throws {
    try withTemporaryDirectory { directory in
      let backend = backend(in: directory)
      try FileManager.default.createSymbolicLink(atPath: backend.link, withDestinationPath: "/elsewhere")
      try writeText("junk", to: backend.link + ".tmp")
      #expect(backend.target() == nil)
      try backend.apply(BootPlan(primary: .b))
      #expect(try linkTarget(backend.link) == directory + "/slot-b.img")
      #expect(!FileManager.default.fileExists(atPath: backend.link + ".tmp"))
    }
  }

  @Test func refusesToReplaceARegularFile() throws {
    try withTemporaryDirectory { directory in
      let backend = backend(in: directory)
      try writeText("precious", to: backend.link)
      #expect(throws: BootBackendError("\(backend.link) exists and is not a symbolic link; move it aside")) {
        try backend.apply(BootPlan(primary: .a))
      }
      #expect(try String(contentsOfFile: backend.link, encoding: .utf8) == "precious")
    }
  }

  @Test func reportsAMissingDirectoryAndABadConfiguration() throws {
    try withTemporaryDirectory { directory in
      let missing = FileLinkBackend(link: directory + "/no/current", slotPaths: SlotPair(a: "/a", b: "/b"))
      #expect(
        throws: BootBackendError(
          "symlink \(directory)/no/current.primary.tmp: No such file or directory (errno 2)",
          errno: .noSuchFile)
      ) {
        try missing.apply(BootPlan(primary: .a))
      }
    }
  }

  @Test func knowsNoBootedSlotAndNeedsNoRestartCommand() throws {
    let backend = FileLinkBackend(link: "/nonexistent/current", slotPaths: SlotPair(a: "/a", b: "/b"))
    #expect(backend.name == "file")
    #expect(try backend.bootedSlot() == nil)
    #expect(
      backend.restartCommand(for: BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 1))) == nil)
  }
}
