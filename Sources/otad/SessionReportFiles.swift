import OTADaemon
import OTASystem

/// `otad run --sessions DIR`: each central's session (docs/APP-TESTING.md) written when it ends,
/// as `session-<time>-<n>.txt` (readable) and `.json` (the trace Perfetto opens), durably. The
/// folder keeps the newest `keep` sessions; older ones are removed. A failure to write is said once
/// on standard error: serving goes on.
final class SessionReportFiles {
  static let keep = 200
  let directory: String
  private var recorder = SessionRecorder()
  private var failing = false
  private let runStart = ProcessEnvironment.wallClockMicroseconds

  init(directory: String) throws {
    self.directory = directory
    try FileSystem.makeDirectories(directory)
  }

  func record(_ activity: DeviceActivity) {
    recorder.record(activity, at: ProcessEnvironment.wallClockMicroseconds)
    let ended = recorder.takeEnded()
    guard !ended.isEmpty else { return }
    for session in ended { write(session) }
    prune()
  }

  private func write(_ session: SessionRecord) {
    // The run's start keeps the names of a restarted otad (whose numbers start again) apart.
    let name = "\(directory)/\(session.fileName(runStart: runStart))"
    do throws(SystemError) {
      try DurableWrite.replace(name + ".txt", with: Array(session.text.utf8))
      try DurableWrite.replace(name + ".json", with: Array(session.trace.document().utf8))
      failing = false
    } catch {
      guard !failing else { return }
      failing = true
      StandardStreams.writeError("otad: cannot write the session report \(name): \(error); serving goes on\n")
    }
  }

  /// The newest `keep` sessions stay (their names sort by time).
  private func prune() {
    guard let entries = try? FileSystem.directoryEntries(directory) else { return }
    let reports = entries.filter { $0.hasPrefix("session-") && $0.hasSuffix(".txt") }.sorted()
    for old in reports.dropLast(Self.keep) {
      let base = String(old.dropLast(4))
      try? FileSystem.unlinkIfPresent("\(directory)/\(base).txt")
      try? FileSystem.unlinkIfPresent("\(directory)/\(base).json")
    }
  }
}
