import Glibc

/// This process's environment and clocks, read through the system layer.
public enum ProcessEnvironment {
  /// Every `NAME=value` entry of the environment, in order.
  public static var entries: [String] {
    var entries: [String] = []
    var cursor = environ
    while let entry = cursor.pointee {
      entries.append(String(cString: entry))
      cursor += 1
    }
    return entries
  }

  /// The value of one variable, or nil.
  public static func value(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
  }

  /// Writes out what `print` buffered (every stdio stream: `fflush(NULL)`): an exec replaces the process without flushing stdio, and a
  /// restart command may take the machine down.
  public static func flushStandardOutput() { fflush(nil) }

  /// This process's id.
  public static var processID: Int32 { getpid() }

  /// CPU time used by the calling thread so far.
  public static func threadCPUTime() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
  }

  /// CPU time used by the whole process so far (every thread, user and system).
  public static func processCPUTime() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
  }

  /// Blocks the calling thread for `duration` (a wait, not a deadline: an interruption ends it early).
  public static func sleep(_ duration: Duration) {
    let components = duration.components
    var pause = timespec(
      tv_sec: Int(components.seconds), tv_nsec: Int(components.attoseconds / 1_000_000_000))
    nanosleep(&pause, nil)
  }
}

extension ProcessEnvironment {
  /// Wall-clock time in microseconds since 1970 (CLOCK_REALTIME): what traces of different processes
  /// share as their time base.
  public static var wallClockMicroseconds: UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return UInt64(max(0, spec.tv_sec)) * 1_000_000 + UInt64(max(0, spec.tv_nsec)) / 1_000
  }

  /// Ends this process at once with `code` (exit(3): atexit handlers run, stdio is flushed).
  public static func exit(_ code: Int32) -> Never {
    Glibc.exit(code)
  }

  /// The user this process acts as (geteuid): who may talk to its local controls.
  public static var effectiveUserID: UInt32 { geteuid() }

  /// Ends this process as a power cut would (a fault asked for, docs/APP-TESTING.md): SIGKILL to
  /// itself, so nothing is flushed, synced or closed on the way out.
  public static func cutPower() -> Never {
    _ = SystemCalls.check(.kill, path: "self") { Glibc.kill(getpid(), SIGKILL) }
    Glibc._exit(137)
  }

  /// Whether a process `pid` exists (kill(2) with signal 0 succeeds, or is refused only for want of
  /// permission).
  public static func processExists(_ pid: Int32) -> Bool {
    guard pid > 0 else { return false }
    if Glibc.kill(pid, 0) == 0 { return true }
    return errno == EPERM
  }

  /// Sends `signal` to the process `pid`: true if it was delivered (kill(2) succeeded).
  @discardableResult
  public static func send(_ signal: Int32, toProcess pid: Int32) -> Bool {
    SystemCalls.check(.kill, path: "pid \(pid)", { Glibc.kill(pid, signal) }) == nil
  }
}
