import Foundation
import OTADevice
import OTATrace

/// `otad run --trace FILE`: the daemon's trace, rewritten whole (write and rename: a reader never
/// sees half a file) at most every quarter second while windows stream (up to two seconds for a
/// large trace), and at once for every other step, so that a kill loses only the last windows. A restarted daemon continues
/// the file it finds (a trace it wrote; anything else is replaced).
final class DeviceTraceFile {
  let path: String
  private var trace = DeviceTrace()
  private let earlier: [String]
  private var lastWrite: UInt64 = 0

  /// The earlier runs' events kept at most: the file stays bounded across restarts too.
  static let earlierLimit = 50_000

  init(path: String) {
    self.path = path
    let old = (try? String(contentsOfFile: path, encoding: .utf8)).map(TraceJSON.eventLines) ?? []
    earlier = Array(old.suffix(Self.earlierLimit))
  }

  /// Wall-clock microseconds: the same time base as otactl's trace.
  static var now: UInt64 { UInt64(max(0, Date().timeIntervalSince1970 * 1_000_000)) }

  func record(_ activity: DeviceActivity) {
    let now = Self.now
    trace.record(activity, at: now)
    switch activity {
    case .request("WINDOW", _, _), .response("WINDOW", _, _, _):
      if now - lastWrite >= Self.windowInterval(events: trace.builder.events.count) { write(at: now) }
    default:
      write(at: now)
    }
  }

  /// How long window events wait to be written: a quarter second, longer as the file grows (a
  /// 64 MiB push is thousands of windows: the file is rewritten whole at most every two seconds).
  static func windowInterval(events: Int) -> UInt64 { min(2_000_000, max(250_000, UInt64(events) * 250)) }

  func write(at now: UInt64 = DeviceTraceFile.now) {
    lastWrite = now
    do {
      try Data(trace.document(after: earlier).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
      FileHandle.standardError.write(Data("otad: cannot write the trace \(path): \(error)\n".utf8))
    }
  }
}
