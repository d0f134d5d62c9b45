import Logging
import OTALogging
import OTASystem
import Testing

@Suite struct JournalPriorityTests {
  @Test func eachLevelHasSdDaemonsPriority() {
    let expected: [(Logger.Level, Int)] = [
      (.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2),
    ]
    for (level, number) in expected { #expect(JournalPriority.number(level) == number, "\(level)") }
  }

  @Test func everyLineOfAMessageCarriesThePrefix() {
    #expect(JournalPriority.prefixed("one", level: .warning) == "<4>one")
    #expect(JournalPriority.prefixed("one\ntwo", level: .error) == "<3>one\n<3>two")
  }

  @Test func theHandlerWritesPriorityLabelMessageAndSortedMetadata() {
    var handler = JournalLogHandler(label: "otad")
    handler.metadata = ["z": "last"]
    let event = LogEvent(
      level: .warning, message: "dropped a client", metadata: ["peer": "pid 42"], source: nil, file: #fileID,
      function: #function, line: #line)
    #expect(handler.line(event) == "<4>otad: dropped a client peer=pid 42 z=last")
  }
}

@Suite struct JournalStreamTests {
  @Test func theVariableIsDeviceColonInodeInDecimal() {
    #expect(JournalStream.identity("8:123456")! == (8, 123456))
    for malformed in ["", "8", "8:", ":1", "a:b", "1:2:3", "-1:2", " 8:1"] {
      #expect(JournalStream.identity(malformed) == nil, "\(malformed)")
    }
  }

  @Test func onlyTheNamedDeviceAndInodeMatch() {
    #expect(JournalStream.matches("8:123456", (8, 123456)))
    #expect(!JournalStream.matches("8:123456", (8, 123457)), "another inode: a file or pipe since")
    #expect(!JournalStream.matches("9:123456", (8, 123456)), "another device")
    #expect(!JournalStream.matches(nil, (8, 123456)), "no JOURNAL_STREAM: not under systemd")
    #expect(!JournalStream.matches("8:123456", nil), "standard error could not be read")
    #expect(!JournalStream.matches("junk", (8, 123456)))
  }

  @Test func standardErrorsOwnIdentityIsWhatTheCheckCompares() throws {
    // fstat of the real standard error: JOURNAL_STREAM naming its device and inode matches it.
    let status = try StandardStreams.errorStatus()
    #expect(JournalStream.matches("\(status.device):\(status.inode)", (status.device, status.inode)))
  }
}
