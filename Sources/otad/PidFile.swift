import Foundation

/// `<state directory>/otad.pid`: how `otad mark-good` and `mark-bad` find the running daemon to tell
/// it (SIGHUP) that the boot state changed.
struct PidFile {
  let path: String

  init(directory: String) { path = directory + "/otad.pid" }

  func write() {
    try? "\(getpid())\n".write(toFile: path, atomically: true, encoding: .utf8)
  }

  func remove() {
    guard let pid = read(), pid == getpid() else { return }
    unlink(path)
  }

  func read() -> pid_t? {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
    return pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
  }

  /// Sends SIGHUP to the daemon if one runs (its pid file names a live otad process). True if sent.
  func signalReload() -> Bool {
    guard let pid = read(), pid > 0,
      let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
      name.hasPrefix("otad")
    else { return false }
    return kill(pid, SIGHUP) == 0
  }
}
