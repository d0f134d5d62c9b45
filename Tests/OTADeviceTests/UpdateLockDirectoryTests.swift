import Foundation
import Logging
import OTADaemon
import OTAReceiverHost
import OTASystem
import OTATestSupport
import Testing

/// The lock directory as otad reads it (docs/OTAD.md, "The device has a say"): what holds, what
/// is stale, and what a hostile or careless writer cannot make it do.
@Suite struct UpdateLockDirectoryTests {
  static func lock(_ text: String) -> [UInt8] { Array(text.utf8) }

  @Test func aLockHoldsWhileItsProcessLivesAndNotAfter() throws {
    // [SEC-ATK-65]
    let folder = try TemporaryDirectory(label: "locks")
    defer { folder.remove() }
    let directory = UpdateLockDirectory(path: folder.path, logger: Logger(label: "test"))
    let me = ProcessEnvironment.processID
    try folder.write(Self.lock("pid=\(me)\nreason=printing job 17\n"), "printer.lock")
    #expect(
      directory.updateLocks() == [
        UpdateLock(holder: "printer", reason: "printing job 17", pid: me, until: nil)
      ])

    // A process that is gone (pid_max is at most 4194304): stale, holds nothing.
    try folder.write(Self.lock("pid=4194305\nreason=crashed\n"), "printer.lock")
    #expect(directory.updateLocks().isEmpty)
    #expect(
      directory.survey().first?.state
        == .stale(
          UpdateLock(holder: "printer", reason: "crashed", pid: 4_194_305, until: nil),
          "its process 4194305 is gone"))

    // A deadline alone holds until it passes.
    let now = directory.wallClock()
    try folder.write(Self.lock("until=\(now + 3600)\n"), "backup.lock")
    try folder.write(Self.lock("until=\(now - 1)\nreason=old\n"), "old.lock")
    #expect(directory.updateLocks().map(\.holder) == ["backup"])
  }

  @Test func whatIsNotALockHoldsNothing() throws {
    // [SEC-ATK-65]
    let folder = try TemporaryDirectory(label: "locks")
    defer { folder.remove() }
    let directory = UpdateLockDirectory(path: folder.path, logger: Logger(label: "test"))
    let me = ProcessEnvironment.processID
    try folder.write(Self.lock("reason=forever\n"), "neither.lock")  // no pid, no deadline
    try folder.write(Self.lock("pid=0\n"), "zero.lock")
    try folder.write(Self.lock("pid=\(me)\nshell=rm -rf /\n"), "unknown-key.lock")
    try folder.write([UInt8](repeating: 0x61, count: 5000), "huge.lock")
    try folder.write(Self.lock("pid=\(me)\n"), "not-a-lock.txt")
    try folder.write(Self.lock("pid=\(me)\n"), ".hidden.lock")
    // A symbolic link to a file that would parse is not followed.
    let target = try folder.write(Self.lock("pid=\(me)\nreason=elsewhere\n"), "target")
    try FileSystem.makeSymbolicLink(folder.path("link.lock"), pointingAt: target)
    try FileSystem.makeDirectory(folder.path("dir.lock"))
    #expect(directory.updateLocks().isEmpty)
    #expect(
      directory.survey().map(\.holder).sorted() == ["dir", "huge", "link", "neither", "unknown-key", "zero"])
    #expect(directory.survey().allSatisfy { $0.state == .unreadable })
    // No directory at all: no lock.
    #expect(
      UpdateLockDirectory(path: folder.path("missing"), logger: Logger(label: "test")).updateLocks().isEmpty)
  }

  @Test func aReasonCannotCarryControlCharactersOrGrowWithoutEnd() {
    let lock = ActivationRecords.parseLock(
      holder: "x", Self.lock("pid=7\nreason=\u{1B}[31mred\u{7}" + String(repeating: "y", count: 500) + "\n"))
    #expect(lock?.reason.hasPrefix("[31mred") == true && lock?.reason.count == 200)
  }
}
