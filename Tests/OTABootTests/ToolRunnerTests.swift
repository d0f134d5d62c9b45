import Foundation
import OTATestSupport
import Testing

@testable import OTABoot

@Suite("ToolRunner")
struct ToolRunnerTests {
  @Test func passesArgumentsAndReturnsStandardOutput() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      try tools.install("show", "#!/bin/sh\nfor a in \"$@\"; do printf '<%s>' \"$a\"; done\n")
      let output = try tools.runner.runText("show", ["one", "two words", ""])
      #expect(output == "<one><two words><>")
    }
  }

  @Test func feedsStandardInputAndCollectsLargeOutputsOnBothStreams() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      // 300 KB in, and out again on stdout while 200 KB go to stderr: a runner that wrote all its
      // input before reading, or read one stream to its end before the other, would deadlock here.
      try tools.install("echo-both", "#!/bin/sh\nhead -c 200000 /dev/zero >&2 &\ncat\nwait\n")
      let input = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
      let output = try tools.runner.run("echo-both", input: input)
      #expect(output == input)
    }
  }

  @Test func aToolThatIgnoresItsInputDoesNotHurtTheCaller() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      try tools.install("deaf", "#!/bin/sh\necho done\n")
      let output = try tools.runner.runText("deaf", input: String(repeating: "x", count: 2_000_000))
      #expect(output == "done\n")
    }
  }

  @Test func withoutInputStandardInputIsEmpty() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      try tools.install("count", "#!/bin/sh\nwc -c\n")
      #expect(try tools.runner.runText("count").trimmingWhitespace() == "0")
    }
  }

  @Test func theToolSeesTheSearchPathAsItsPath() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      try tools.install("path", "#!/bin/sh\nprintf '%s' \"$PATH\"\n")
      #expect(try tools.runner.runText("path") == tools.bin + ":/usr/bin:/bin")
    }
  }

  @Test func aNonZeroExitNamesTheCommandTheStatusAndStandardError() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      try tools.install(
        "broken", "#!/bin/sh\necho 'some output'\necho 'Cannot access MTD device /dev/mtd1' >&2\nexit 3\n")
      #expect(
        throws: BootBackendError("`broken --flag` exited with status 3: Cannot access MTD device /dev/mtd1")
      ) {
        try tools.runner.run("broken", ["--flag"])
      }
      try tools.install("quiet", "#!/bin/sh\nexit 1\n")
      #expect(throws: BootBackendError("`quiet` exited with status 1")) { try tools.runner.run("quiet") }
    }
  }

  @Test func aSignalIsReported() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      try tools.install("crash", "#!/bin/sh\nkill -KILL $$\n")
      #expect(throws: BootBackendError("`crash` was killed by signal 9")) { try tools.runner.run("crash") }
    }
  }

  @Test func aHangingToolIsKilledAtTheTimeout() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      try tools.install("hang", "#!/bin/sh\nexec sleep 20\n")
      let runner = ToolRunner(searchPath: tools.runner.searchPath, timeout: .milliseconds(300))
      let start = ContinuousClock.now
      let error = #expect(throws: BootBackendError.self) { try runner.run("hang") }
      #expect(error?.description.hasPrefix("`hang` did not finish within") == true)
      #expect(ContinuousClock.now - start < .seconds(5))
    }
  }

  @Test func aMissingToolIsNamedWithTheSearchPath() throws {
    try withTemporaryDirectory { directory in
      let runner = ToolRunner(searchPath: directory + "::" + directory + "/nowhere")
      #expect(throws: BootBackendError("fw_printenv: not found in \(directory)::\(directory)/nowhere")) {
        try runner.run("fw_printenv")
      }
    }
  }

  @Test func lookupSkipsFilesThatAreNotExecutableAndDirectories() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let first = directory + "/first"
      try FileManager.default.createDirectory(atPath: first + "/tool", withIntermediateDirectories: true)
      try writeText("#!/bin/sh\necho wrong\n", to: first + "/other")
      try tools.install("tool", "#!/bin/sh\necho right\n")
      try tools.install("other", "#!/bin/sh\necho right\n")
      let runner = ToolRunner(searchPath: first + ":" + tools.runner.searchPath)
      #expect(try runner.runText("tool") == "right\n")
      #expect(try runner.runText("other") == "right\n")
      #expect(try runner.locate("/bin/sh") == "/bin/sh")
    }
  }
}
