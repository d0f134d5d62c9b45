import OTASystem
import Testing

@Suite("Spawn")
struct SpawnTests {
  @Test func reportsTheExitStatus() throws {
    let child = try Spawn("/bin/sh", arguments: ["-c", "exit 3"]).start()
    #expect(try child.waitForExit() == .exited(3))
  }

  @Test func reportsTheSignalThatKilledIt() throws {
    let child = try Spawn("/bin/sh", arguments: ["-c", "kill -9 $$"]).start()
    #expect(try child.waitForExit() == .signalled(9))
  }

  @Test func aMissingProgramIsNoSuchFile() {
    #expect(throws: SystemError(operation: "spawn", path: "/nonexistent/program", errno: .noSuchFile)) {
      try Spawn("/nonexistent/program").start()
    }
  }

  @Test func aPidfdPollsReadableWhenTheChildExits() throws {
    let child = try Spawn("/bin/sh", arguments: ["-c", "exit 0"]).start()
    let pidfd = try child.openDescriptor()
    #expect(try Poller.wait(for: [pidfd.rawValue], timeout: .seconds(10)) == [pidfd.rawValue])
    #expect(try child.exitIfEnded() == .exited(0))
  }

  @Test func theOutputGoesWhereItIsRedirected() throws {
    let (ours, theirs) = try FileDescriptor.unixSocketPair()
    var spawn = Spawn("/bin/sh", arguments: ["-c", "printf hello"])
    spawn.standardOutput = .descriptor(theirs.rawValue)
    let child = try spawn.start()
    try theirs.close()
    #expect(try child.waitForExit() == .exited(0))
    var buffer = [UInt8](repeating: 0, count: 16)
    let count = try buffer.withUnsafeMutableBytes { try ours.readSome(into: $0) } ?? 0
    #expect(String(decoding: buffer[..<count], as: UTF8.self) == "hello")
  }
}
