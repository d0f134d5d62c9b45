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
