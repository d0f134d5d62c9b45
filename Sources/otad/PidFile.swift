import OTASystem

/// `<state directory>/otad.pid`: how `otad mark-good` and `mark-bad` find the running daemon to tell
/// it (SIGHUP) that the boot state changed. Written durably (write, fsync, rename, fsync the
/// directory): after a power cut the file names this daemon or the one before, never half a number.
struct PidFile {
  let path: String

  init(directory: String) { path = directory + "/otad.pid" }

  func write() {
    try? DurableWrite.replace(path, with: Array("\(ProcessEnvironment.processID)\n".utf8))
  }

  func remove() {
    guard let pid = read(), pid == ProcessEnvironment.processID else { return }
    try? FileSystem.unlinkIfPresent(path)
  }

  func read() -> Int32? {
    guard let text = try? FileSystem.readText(path) else { return nil }
    return Int32(text.trimmingWhitespace)
  }

  /// Sends SIGHUP to the daemon if one runs (its pid file names a live otad process). True if sent.
  func signalReload() -> Bool {
    guard let pid = read(), pid > 0,
      let name = try? FileSystem.readText("/proc/\(pid)/comm"),
      name.hasPrefix("otad")
    else { return false }
    return ProcessEnvironment.send(StopSignals.reload, toProcess: pid)
  }
}

extension String {
  /// Without the spaces, tabs and line ends at either end.
  var trimmingWhitespace: String {
    let isSpace: (Character) -> Bool = { $0.isWhitespace || $0.isNewline }
    return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
  }
}
