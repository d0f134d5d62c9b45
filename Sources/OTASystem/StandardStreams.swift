import Glibc

/// Standard output and standard error, written whole through the system layer (no buffering: a line
/// is out when the call returns). A stream that cannot take it (closed, full) is not an error here:
/// there is nowhere left to say so.
public enum StandardStreams {
  /// Writes `text` to standard error.
  public static func writeError(_ text: String) {
    write(Array(text.utf8), to: STDERR_FILENO, name: "stderr")
  }

  /// Writes `bytes` to standard output.
  public static func writeOutput(_ bytes: [UInt8]) {
    write(bytes, to: STDOUT_FILENO, name: "stdout")
  }

  /// `fstat(2)` of standard error: its device and inode say whether it is the journal's stream
  /// (systemd's JOURNAL_STREAM names them).
  public static func errorStatus() throws(SystemError) -> FileStatus {
    var info = stat()
    if let code = SystemCalls.check(
      .fstat, path: "stderr", descriptor: STDERR_FILENO, { Glibc.fstat(STDERR_FILENO, &info) })
    {
      throw SystemError(operation: "fstat", path: "stderr", errno: code)
    }
    return FileStatus(info)
  }

  private static func write(_ bytes: [UInt8], to descriptor: Int32, name: String) {
    bytes.withUnsafeBytes { buffer in
      guard let base = buffer.baseAddress else { return }
      var done = 0
      while done < buffer.count {
        let result = SystemCalls.perform(
          .write, path: name, descriptor: descriptor, count: buffer.count - done
        ) {
          count in
          Glibc.write(descriptor, base + done, count)
        }
        guard case .success(let written) = result, written > 0 else { return }
        done += written
      }
    }
  }
}
