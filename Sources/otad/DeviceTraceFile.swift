import OTADaemon
import OTASystem
import OTATrace

/// `otad run --trace FILE`: the daemon's trace, rewritten whole and durably (write, fsync, rename,
/// fsync the directory: a reader never sees half a file, nor does a power cut leave one) as
/// `DeviceTraceWritePacing` says, so that a kill loses only the last windows.
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
    let old = (try? FileSystem.readText(path)).map(TraceJSON.eventLines) ?? []
    earlier = Array(old.suffix(Self.earlierLimit))
  }

  /// Wall-clock microseconds: the same time base as otactl's trace.
  static var now: UInt64 { ProcessEnvironment.wallClockMicroseconds }

  func record(_ activity: DeviceActivity) {
    let now = Self.now
    trace.record(activity, at: now)
    switch activity {
    case .dataWrite, .smpRequest, .smpAnswer, .smpClientGone, .nordicDFU, .nordicDFUPacket, .nordicDFUGone:
      break
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
    do throws(SystemError) {
      try DurableWrite.replace(path, with: Array(trace.document(after: earlier).utf8))
      if failing {
        StandardStreams.writeError("otad: the trace \(path) is written again\n")
        failing = false
      }
    } catch {
      // Once per run of failures (a full disk fails every write): the daemon goes on without it.
      guard !failing else { return }
      failing = true
      StandardStreams.writeError(
        "otad: cannot write the trace \(path): \(error); serving goes on, the trace waits\n")
    }
  }
}
