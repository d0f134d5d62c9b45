import OTASystem
import OTASystemTesting
import OTATestSupport
import Testing

@Suite("EINTR and short writes")
struct RetryTests {
  @Test func anInterruptedWriteIsRetriedOnceAndSucceeds() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/file"
      let file = try FileDescriptor.open(path, [.readWrite, .create])
      let trace = SystemCallTrace(rules: [.init(.pwrite, .fail(.interrupted))])
      let written = try trace.run { try file.write([1, 2, 3], at: 0) }
      #expect(written == 3)
      #expect(trace.lines == ["pwrite \(path) 3 -> EINTR", "pwrite \(path) 3"])
      #expect(trace.entries.filter { $0.result == .failure(.interrupted) }.count == 1)
      #expect(try file.read(at: 0, count: 10) == [1, 2, 3])
      try file.close()
    }
  }

  @Test func anInterruptedCloseIsNotRetried() throws {
    try withTemporaryDirectory { directory in
      let file = try FileDescriptor.open(directory + "/file", [.readWrite, .create])
      let trace = SystemCallTrace(rules: [.init(.close, .fail(.interrupted))])
      try trace.run { try file.close() }
      #expect(trace.entries.map(\.call.name) == [.close])
    }
  }

  @Test func aShortWriteIsContinuedFromWhereItStopped() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/file"
      let file = try FileDescriptor.open(path, [.readWrite, .create])
      let trace = SystemCallTrace(rules: [.init(.pwrite, .limit(2))])
      let written = try trace.run { try file.write([1, 2, 3, 4, 5], at: 10) }
      #expect(written == 5)
      #expect(trace.entries.map(\.result) == [.success(2), .success(3)])
      #expect(trace.lines == ["pwrite \(path) 5", "pwrite \(path) 3"])
      #expect(try file.read(at: 10, count: 10) == [1, 2, 3, 4, 5])
    }
  }

  @Test func aShortReadIsContinuedUntilEndOfFile() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/file"
      try DurableWrite.replace(path, with: Array(0..<100))
      let file = try FileDescriptor.open(path, .readOnly)
      let trace = SystemCallTrace(rules: [.init(.pread, .limit(30), times: 2)])
      let bytes = try trace.run { try file.read(at: 0, count: 200) }
      #expect(bytes == Array(0..<100))
      #expect(trace.entries.map(\.result) == [.success(30), .success(30), .success(40), .success(0)])
    }
  }
}
