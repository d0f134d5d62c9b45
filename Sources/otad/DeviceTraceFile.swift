import Foundation
import OTADaemon
import OTATrace

/// `otad run --trace FILE`: the daemon's trace, rewritten whole (write and rename: a reader never
/// sees half a file) as `DeviceTraceWritePacing` says, so that a kill loses only the last windows.
/// A restarted daemon continues the file it finds (a trace it wrote; anything else is replaced).
final class DeviceTraceFile {
  let path: String
  private var trace = DeviceTrace()
  private let earlier: [String]
  private var lastWrite: UInt64 = 0
  private var failing = false

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
      if DeviceTraceWritePacing.windowWriteDue(
        now: now, lastWrite: lastWrite, events: trace.builder.events.count)
      {
        write(at: now)
      }
    default:
      write(at: now)
    }
  }

  func write(at now: UInt64 = DeviceTraceFile.now) {
    lastWrite = now
    do {
      try Data(trace.document(after: earlier).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
      if failing {
        FileHandle.standardError.write(Data("otad: the trace \(path) is written again\n".utf8))
        failing = false
      }
    } catch {
      // Once per run of failures (a full disk fails every write): the daemon goes on without it.
      guard !failing else { return }
      failing = true
      FileHandle.standardError.write(
        Data("otad: cannot write the trace \(path): \(error); serving goes on, the trace waits\n".utf8))
    }
  }
}
