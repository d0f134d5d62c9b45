import OTASender
import OTATrace

/// A push as a trace (Chrome's Trace Event Format): the push as one slice, its phases nested in it,
/// one slice per committed window with its check's result, and instants for reconnects, resumes,
/// resends and failed window checks. Fed with what `PushSession` reports (a progress per committed
/// window, not per chunk), so it stays small: a few events per window. Times are microseconds.
public struct PushTrace: Sendable {
  /// The tracks (threads) of the central's process.
  public enum Track: Int, Sendable {
    case push = 1
    case windows = 2
    case link = 3
  }

  public private(set) var builder: TraceBuilder
  private var phase: String?
  private var phaseStart: UInt64 = 0
  private var committed: UInt32 = 0
  private var windowStart: UInt64?
  private var failures = 0
  private var failuresAtWindowStart = 0
  private var chunksResent = 0
  private var reconnects = 0
  private var resumes = 0
  private var finished = false

  public init(image: String, version: String, size: Int, at time: UInt64, pid: Int = 1, limit: Int = 50_000) {
    builder = TraceBuilder(pid: pid, limit: limit)
    builder.nameProcess("otactl push")
    builder.nameThread(Track.push.rawValue, "phases")
    builder.nameThread(Track.windows.rawValue, "windows")
    builder.nameThread(Track.link.rawValue, "link")
    builder.begin(
      "push \(version)", tid: Track.push.rawValue, at: time,
      args: [TraceArgument("image", .string(image)), TraceArgument("size", .integer(Int64(size)))])
  }

  /// What the session reported: a phase change or a committed window.
  public mutating func record(_ progress: SenderProgress, _ report: SenderReport, at time: UInt64) {
    guard !finished else { return }
    notice(report, at: time)
    let name = Self.phaseName(progress.phase)
    if name != phase {
      closePhase(at: time)
      phase = name
      phaseStart = time
      if name == "transfer" { windowStart = time }
    }
    if progress.committed > committed {
      if let start = windowStart {
        let failed = report.windowFailures - failuresAtWindowStart
        builder.complete(
          "window", tid: Track.windows.rawValue, from: start, to: time,
          args: [
            TraceArgument("offset", .integer(Int64(committed))),
            TraceArgument("length", .integer(Int64(progress.committed - committed))),
            TraceArgument("crc", .string(failed == 0 ? "ok" : "ok after \(failed) failed check(s)")),
            TraceArgument("failedChecks", .integer(Int64(failed))),
          ])
      }
      committed = progress.committed
      windowStart = time
      failuresAtWindowStart = report.windowFailures
    }
  }

  /// The end of the push: the last phase closed, the result as an instant, the push slice ended.
  public mutating func finish(_ outcome: SenderOutcome, at time: UInt64) {
    guard !finished else { return }
    closePhase(at: time)
    switch outcome {
    case .succeeded(let report):
      notice(report, at: time)
      builder.instant(
        "succeeded", tid: Track.push.rawValue, at: time,
        args: [TraceArgument("windows", .integer(Int64(report.windowsCommitted)))])
    case .activationKept(let kept, let report):
      notice(report, at: time)
      builder.instant(
        "activation kept", tid: Track.push.rawValue, at: time,
        args: [
          TraceArgument("exitCode", .integer(Int64(kept.exitCode))),
          TraceArgument("reason", .string(kept.explanation)),
        ])
    case .failed(let failure, let report):
      notice(report, at: time)
      builder.instant(
        "failed", tid: Track.push.rawValue, at: time,
        args: [
          TraceArgument("exitCode", .integer(Int64(failure.exitCode))),
          TraceArgument("reason", .string(failure.explanation)),
        ])
    }
    builder.end(tid: Track.push.rawValue, at: time)
    finished = true
  }

  /// The JSON document (open slices closed at the latest time seen).
  public func document() -> String { builder.document() }

  /// Reconnects, resumes, resends and failed checks since the last report, as instants.
  private mutating func notice(_ report: SenderReport, at time: UInt64) {
    if report.reconnects > reconnects {
      builder.instant(
        "reconnect", tid: Track.link.rawValue, at: time,
        args: [TraceArgument("reconnects", .integer(Int64(report.reconnects)))])
      reconnects = report.reconnects
    }
    if report.resumedFrom.count > resumes {
      for offset in report.resumedFrom[resumes...] {
        builder.instant(
          "resume", tid: Track.link.rawValue, at: time,
          args: [TraceArgument("offset", .integer(Int64(offset)))])
        // The committed offset the device reported: no window of this push covers what lies before it.
        if offset > committed { committed = offset }
      }
      resumes = report.resumedFrom.count
      windowStart = time
    }
    if report.windowFailures > failures {
      builder.instant(
        "window check failed", tid: Track.windows.rawValue, at: time,
        args: [TraceArgument("failures", .integer(Int64(report.windowFailures - failures)))])
      failures = report.windowFailures
    }
    if report.chunksResent > chunksResent {
      builder.instant(
        "resend", tid: Track.link.rawValue, at: time,
        args: [TraceArgument("chunks", .integer(Int64(report.chunksResent - chunksResent)))])
      chunksResent = report.chunksResent
    }
  }

  private mutating func closePhase(at time: UInt64) {
    guard let phase else { return }
    builder.complete(phase, tid: Track.push.rawValue, from: phaseStart, to: time)
    self.phase = nil
  }

  /// The five phases and the steps around them, as the trace names them; nil for none.
  static func phaseName(_ phase: SenderPhase) -> String? {
    switch phase {
    case .idle, .finished: nil
    case .connecting, .readingInfo, .checkingStatus: "connect"
    case .preparing: "PREPARE"
    case .transferring: "transfer"
    case .validating: "VALIDATE"
    case .activating: "ACTIVATE"
    case .restarting: "restart"
    case .verifying, .awaitingConfirmation, .confirming: "VERIFY"
    }
  }
}
