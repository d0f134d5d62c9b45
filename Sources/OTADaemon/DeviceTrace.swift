import OTATrace

/// The daemon's activity as a trace (Chrome's Trace Event Format): the phases PREPARE, transfer,
/// VALIDATE and ACTIVATE as slices, one slice per window from the previous answer to its own with
/// the check's result, and instants for connections, boot decisions, health checks, verdicts and
/// restarts. Only complete slices and instants: a process killed mid-slice leaves nothing open, and
/// a restarted daemon continues the same file. Pure: events and times (microseconds) in, JSON out.
public struct DeviceTrace: Sendable {
  public enum Track: Int, Sendable, CaseIterable {
    case phases = 1
    case windows = 2
    case link = 3
    case boot = 4

    var name: String {
      switch self {
      case .phases: "phases"
      case .windows: "windows"
      case .link: "link"
      case .boot: "boot"
      }
    }
  }

  public private(set) var builder: TraceBuilder
  /// Requests waiting for their answer (PREPARE, VALIDATE, ACTIVATE, CONFIRM): when each was asked.
  private var asked: [String: UInt64] = [:]
  /// Windows asked for and not yet answered, oldest first.
  private var windows: [(offset: UInt32, length: UInt32)] = []
  /// Where the next window's slice starts: the last window's answer, or the transfer's start.
  private var windowStart: UInt64?
  /// The transfer slice under way: when and from which offset it began.
  private var transfer: (start: UInt64, offset: UInt32)?
  private var committed: UInt32 = 0

  public init(pid: Int = 2, limit: Int = 50_000) {
    builder = TraceBuilder(pid: pid, limit: limit)
    builder.nameProcess("otad")
    for track in Track.allCases { builder.nameThread(track.rawValue, track.name) }
  }

  public mutating func record(_ activity: DeviceActivity, at time: UInt64) {
    switch activity {
    case .bootDecision(let row, let run, let version, let restart, let rolledBack):
      var args = [
        TraceArgument("row", .string(row)), TraceArgument("run", .string(run)),
        TraceArgument("version", .string(version)), TraceArgument("restart", .bool(restart)),
      ]
      if let rolledBack { args.append(TraceArgument("rolledBack", .string(rolledBack))) }
      builder.instant("boot decision", tid: Track.boot.rawValue, at: time, args: args)
    case .serving(let slot, let version, let onTrial, let committed):
      self.committed = committed
      builder.instant(
        "serving", tid: Track.boot.rawValue, at: time,
        args: [
          TraceArgument("slot", .string(slot)), TraceArgument("version", .string(version)),
          TraceArgument("onTrial", .bool(onTrial)), TraceArgument("committed", .integer(Int64(committed))),
        ])
    case .connected(let mtu):
      builder.instant(
        "connected", tid: Track.link.rawValue, at: time,
        args: [TraceArgument("mtu", .integer(Int64(mtu.value)))])
    case .disconnected(let committed):
      endTransfer(at: time, committed: committed, cut: true)
      asked.removeAll()
      windows.removeAll()
      windowStart = nil
      builder.instant(
        "disconnected", tid: Track.link.rawValue, at: time,
        args: [TraceArgument("committed", .integer(Int64(committed)))])
    case .request(let name, let offset, let length):
      request(name, offset: offset, length: length, at: time)
    case .response(let name, let status, let offset, let reason):
      response(name, status: status, offset: offset, reason: reason, at: time)
    case .healthCheck(let passed, let detail):
      builder.instant(
        "health check", tid: Track.boot.rawValue, at: time,
        args: [TraceArgument("passed", .bool(passed)), TraceArgument("exit", .string(detail))])
    case .verdict(let what):
      builder.instant(
        "trial verdict", tid: Track.boot.rawValue, at: time, args: [TraceArgument("verdict", .string(what))])
    case .dataWrite, .smpRequest, .smpAnswer, .smpClientGone, .nordicDFU, .nordicDFUPacket, .nordicDFUGone:
      // Writes are counted per window (their slices); SMP has no phases here.
      break
    case .activation(let what):
      builder.instant(
        "activation", tid: Track.boot.rawValue, at: time, args: [TraceArgument("what", .string(what))])
    case .fault(let what):
      builder.instant(
        "fault", tid: Track.link.rawValue, at: time, args: [TraceArgument("fault", .string(what))])
    case .restart(let reason):
      endTransfer(at: time, committed: committed, cut: true)
      builder.instant(
        "restart", tid: Track.boot.rawValue, at: time, args: [TraceArgument("reason", .string(reason))])
    case .stopped(let signal):
      endTransfer(at: time, committed: committed, cut: true)
      builder.instant(
        "stopped", tid: Track.boot.rawValue, at: time,
        args: [TraceArgument("signal", .integer(Int64(signal)))])
    }
  }

  /// The document, after the event lines of the same file written before a restart.
  public func document(after earlier: [String] = []) -> String { builder.document(after: earlier) }

  private mutating func request(_ name: String, offset: UInt32?, length: UInt32?, at time: UInt64) {
    switch name {
    case "WINDOW":
      // A resumed transfer began when STATUS told the central where to go on from.
      if transfer == nil { transfer = (windowStart ?? time, committed) }
      if windowStart == nil { windowStart = transfer?.start ?? time }
      windows.append((offset ?? committed, length ?? 0))
    case "VALIDATE":
      endTransfer(at: time, committed: committed, cut: false)
      asked[name] = time
    default:
      asked[name] = time
    }
  }

  private mutating func response(
    _ name: String, status: String, offset: UInt32?, reason: String?, at time: UInt64
  ) {
    if name == "WINDOW" {
      let window = windows.isEmpty ? (offset ?? committed, UInt32(0)) : windows.removeFirst()
      let ok = status == "success"
      if ok, let offset { committed = offset }
      builder.complete(
        "window", tid: Track.windows.rawValue, from: windowStart ?? time, to: time,
        args: [
          TraceArgument("offset", .integer(Int64(window.0))),
          TraceArgument("length", .integer(Int64(window.1))),
          TraceArgument("crc", .string(ok ? "ok" : status)),
          TraceArgument("committed", .integer(Int64(committed))),
        ])
      if !ok {
        builder.instant(
          "resend asked", tid: Track.windows.rawValue, at: time,
          args: [
            TraceArgument("offset", .integer(Int64(window.0))), TraceArgument("status", .string(status)),
          ])
      }
      windowStart = time
      return
    }
    if name == "STATUS", let offset {
      // A central resuming learns the committed offset from STATUS, and streams from there.
      committed = offset
      if transfer == nil { windowStart = time }
    }
    guard let start = asked.removeValue(forKey: name) else { return }
    var args = [TraceArgument("status", .string(status))]
    if let reason { args.append(TraceArgument("reason", .string(reason))) }
    if name == "PREPARE" || name == "VALIDATE" || name == "ACTIVATE" {
      builder.complete(name, tid: Track.phases.rawValue, from: start, to: time, args: args)
    } else {
      builder.instant(name, tid: Track.phases.rawValue, at: time, args: args)
    }
    if name == "PREPARE", status == "success" {
      committed = 0
      transfer = (time, 0)
      windowStart = time
    }
  }

  private mutating func endTransfer(at time: UInt64, committed: UInt32, cut: Bool) {
    guard let transfer else { return }
    builder.complete(
      "transfer", tid: Track.phases.rawValue, from: transfer.start, to: time,
      args: [
        TraceArgument("from", .integer(Int64(transfer.offset))),
        TraceArgument("to", .integer(Int64(committed))),
        TraceArgument("ended", .string(cut ? "cut off" : "complete")),
      ])
    self.transfer = nil
  }
}
