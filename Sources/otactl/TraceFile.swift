import OTACentral
import OTASystem

/// `otactl push --trace FILE`: the push's trace, written when the push ends (or fails), durably
/// (write, fsync, rename, fsync the directory): a crash or power cut leaves the old file or the new.
final class TraceFile {
  let path: String
  var trace: PushTrace

  init(path: String, trace: PushTrace) {
    self.path = path
    self.trace = trace
  }

  /// Wall-clock microseconds: the same time base as otad's trace, so that both open side by side.
  static var now: UInt64 { ProcessEnvironment.wallClockMicroseconds }

  func write() {
    do throws(SystemError) {
      try DurableWrite.replace(path, with: Array(trace.document().utf8))
    } catch {
      StandardStreams.writeError("otactl: cannot write the trace \(path): \(error)\n")
    }
  }
}
