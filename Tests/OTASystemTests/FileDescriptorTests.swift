import OTASystem
import OTASystemTesting
import OTATestSupport
import Testing

@Suite("FileDescriptor")
struct FileDescriptorTests {
  @Test func closesExactlyOnceWhenClosedAgainAndReleased() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/file"
      let trace = SystemCallTrace()
      try trace.run {
        let file = try FileDescriptor.open(path, [.writeOnly, .create])
        try file.close()
        try file.close()
        #expect(file.isClosed)
      }
      #expect(trace.entries.map(\.call.name) == [.open, .close])
    }
  }

  @Test func closesWhenTheLastReferenceGoes() throws {
    try withTemporaryDirectory { directory in
      let trace = SystemCallTrace()
      try trace.run {
        var file: FileDescriptor? = try FileDescriptor.open(directory + "/file", [.writeOnly, .create])
        #expect(file?.isClosed == false)
        file = nil
      }
      #expect(trace.entries.map(\.call.name) == [.open, .close])
    }
  }

  @Test func aMissingFileIsTheTypedErrorWithItsName() throws {
    let error = #expect(throws: SystemError.self) { try FileDescriptor.open("/nonexistent/file", .readOnly) }
    #expect(error?.errno == .noSuchFile)
    #expect(error?.description == "open /nonexistent/file: No such file or directory (errno 2)")
  }

  @Test func errnoHasItsNameAndTheLibrarysText() {
    #expect(Errno.noSpace.name == "ENOSPC")
    #expect(Errno.noSpace.description == "No space left on device")
    #expect(Errno.readOnlyFileSystem.rawValue == 30)
    #expect(Errno(rawValue: 4242).name == "errno 4242")
  }

  @Test func pollSeesASocketPairReadableOnlyAfterAWrite() throws {
    let (left, right) = try FileDescriptor.unixSocketPair()
    #expect(try Poller.wait(for: [right.rawValue], timeout: .zero).isEmpty)
    #expect(try left.write([42]) == 1)
    #expect(try Poller.wait(for: [right.rawValue], timeout: .seconds(1)) == [right.rawValue])
    var byte: [UInt8] = [0]
    let got = try byte.withUnsafeMutableBytes { try right.readSome(into: $0) }
    #expect(got == 1 && byte == [42])
    #expect(left.peerCredentials?.processID == ProcessEnvironment.processID)
  }
}
