import OTAWire

/// What one central did on one connection, for an app's team (docs/APP-TESTING.md): every request
/// and answer with its time, the data writes between them summed up (how many, how large, where,
/// in what order, what faults did to them), the faults that fired, and how the connection ended.
/// Pure: activities and wall-clock times (microseconds) in; `text` and `trace` out.
public struct SessionRecord: Sendable {
  /// The most lines kept; past it they are counted, and the last line says how many were left out.
  public static let lineLimit = 4000

  public let number: Int
  /// Who: "OTA central" or an SMP client's name.
  public let central: String
  public let start: UInt64
  public private(set) var end: UInt64?
  public private(set) var lines: [(time: UInt64, text: String)] = []
  public private(set) var omitted = 0
  /// The committed offset when the session began, and where the central's first WINDOW began: where
  /// it resumed.
  public let committedAtStart: UInt32
  public private(set) var resumedAt: UInt32?
  public private(set) var committed: UInt32
  public private(set) var faults: [String] = []
  public private(set) var ending = "still connected"
  /// The same session as a trace (Perfetto, chrome://tracing).
  public private(set) var trace: DeviceTrace
  private var run: DataRun?

  /// The data writes since the last request or answer, summed up as one line.
  struct DataRun: Sendable {
    var first: UInt64
    var last: UInt64
    var writes = 0
    var bytes = 0
    var lowest = UInt32.max
    var highest: UInt32 = 0
    var smallest = Int.max
    var largest = 0
    /// Writes whose offset is below the one before: reordered (EATT's bearers) or sent again.
    var backwards = 0
    var previous: UInt32?
    var lost = 0
    var corrupted = 0

    var text: String {
      var words =
        "data: \(writes) write\(writes == 1 ? "" : "s") of "
        + (smallest == largest ? "\(largest) B" : "\(smallest) to \(largest) B") + " (\(bytes) B)"
        + (writes == 1 ? " at \(lowest)" : ", offsets \(lowest) to \(highest)")
      if backwards > 0 { words += ", \(backwards) below the one before" }
      if lost > 0 { words += ", \(lost) lost by a fault" }
      if corrupted > 0 { words += ", \(corrupted) corrupted by a fault" }
      return words
    }
  }

  init(number: Int, central: String, at time: UInt64, committed: UInt32, pid: Int) {
    self.number = number
    self.central = central
    start = time
    committedAtStart = committed
    self.committed = committed
    trace = DeviceTrace(pid: pid, limit: 20_000)
  }

  mutating func record(_ activity: DeviceActivity, at time: UInt64) {
    trace.record(activity, at: time)
    switch activity {
    case .dataWrite(let offset, let bytes, let fate), .nordicDFUPacket(_, let offset, let bytes, let fate):
      data(offset: offset, bytes: bytes, fate: fate, at: time)
      return
    case .connected(let mtu):
      add("connected, ATT MTU \(mtu.value)", at: time)
    case .request(let name, let offset, let length):
      if name == "WINDOW", resumedAt == nil, let offset { resumedAt = offset }
      add(name + (offset.map { " at \($0)" } ?? "") + (length.map { ", \($0) bytes" } ?? ""), at: time)
    case .response(let name, let status, let offset, let reason):
      if name == "WINDOW" || name == "STATUS", let offset { committed = max(committed, offset) }
      add(
        "\(name) answered \(status)" + (offset.map { ", committed \($0)" } ?? "")
          + (reason.map { ": \($0)" } ?? ""),
        at: time)
    case .fault(let what):
      faults.append(what)
      add(what, at: time)
    case .smpRequest(_, let command, let offset, let bytes):
      add(
        "SMP \(command)" + (offset.map { " at \($0)" } ?? "") + (bytes.map { ", \($0) bytes" } ?? ""),
        at: time)
    case .smpAnswer(_, let rc):
      add(rc.map { "SMP answered rc \($0)" } ?? "SMP answered", at: time)
    case .disconnected(let committed):
      self.committed = committed
      finish("the central disconnected, \(committed) bytes committed", at: time)
    case .restart(let reason):
      finish("the device restarted (\(reason))", at: time)
    case .stopped(let signal):
      finish("otad stopped (signal \(signal))", at: time)
    case .smpClientGone:
      finish("the SMP client went away", at: time)
    case .nordicDFU(_, let line), .activation(let line):
      add(line, at: time)
    case .nordicDFUGone(let service):
      finish("the \(service.rawValue) central went away", at: time)
    case .healthCheck, .verdict, .bootDecision, .serving:
      break
    }
  }

  /// The files' name for this session of a run that began at `runStart` (wall-clock microseconds):
  /// `session-20261127-210405.123-000003`, so that names sort by time.
  public func fileName(runStart: UInt64) -> String {
    let number = String(self.number)
    let milliseconds = String(runStart / 1000 % 1000)
    return "session-\(WallClock.compact(runStart))."
      + String(repeating: "0", count: 3 - milliseconds.count) + milliseconds + "-"
      + String(repeating: "0", count: max(0, 6 - number.count)) + number
  }

  /// One data write into the run of writes since the last line.
  private mutating func data(offset: UInt32, bytes: Int, fate: DataWriteFate, at time: UInt64) {
    var run = self.run ?? DataRun(first: time, last: time)
    run.last = time
    run.writes += 1
    run.bytes += bytes
    run.lowest = min(run.lowest, offset)
    run.highest = max(run.highest, offset)
    run.smallest = min(run.smallest, bytes)
    run.largest = max(run.largest, bytes)
    if let previous = run.previous, offset < previous { run.backwards += 1 }
    run.previous = offset
    if fate == .lostByFault { run.lost += 1 }
    if fate == .corruptedByFault { run.corrupted += 1 }
    self.run = run
  }

  /// A line of the recorder's own (how long the central took to come back).
  mutating func note(_ text: String, at time: UInt64) { add(text, at: time) }

  /// The session ends: the data run still open is written, then why it ended.
  mutating func finish(_ why: String, at time: UInt64) {
    guard end == nil else { return }
    ending = why
    add(why, at: time)
    end = time
  }

  private mutating func add(_ text: String, at time: UInt64) {
    if let run {
      append(run.text, at: run.first)
      self.run = nil
    }
    append(text, at: time)
  }

  private mutating func append(_ text: String, at time: UInt64) {
    guard lines.count < Self.lineLimit else {
      omitted += 1
      return
    }
    lines.append((time, text))
  }

  /// The readable report: a heading, what happened line by line (milliseconds from the start), and
  /// the summary an app's team looks for first.
  public var text: String {
    var out = "session \(number): \(central), from \(WallClock.text(start))"
    if let end { out += " for \(WallClock.milliseconds(end - start)) ms" }
    out += "\n"
    for line in lines {
      let offset = WallClock.milliseconds(line.time - start)
      out += "  +\(offset) ms".padding(12) + line.text + "\n"
    }
    if omitted > 0 { out += "  (\(omitted) more lines left out)\n" }
    out += "summary:\n"
    if central == "OTA central" {
      if let resumedAt {
        out +=
          resumedAt == 0 && committedAtStart == 0
          ? "  sent from the image's start\n"
          : "  resumed at \(resumedAt) (\(committedAtStart) committed when it connected)\n"
      } else {
        out += "  sent no WINDOW\n"
      }
      out += "  committed \(committed) bytes when it ended\n"
    }
    out += faults.isEmpty ? "  no fault fired\n" : "  faults fired: \(faults.count)\n"
    for fault in faults { out += "    \(fault)\n" }
    out += "  ended: \(ending)\n"
    return out
  }
}

extension String {
  fileprivate func padding(_ width: Int) -> String {
    count >= width ? self + " " : self + String(repeating: " ", count: width - count)
  }
}

/// Wall-clock microseconds as UTC text, without Foundation (otad links FoundationEssentials at most).
enum WallClock {
  static func milliseconds(_ microseconds: UInt64) -> UInt64 { microseconds / 1000 }

  /// `2026-11-27 21:04:05.123 UTC`.
  static func text(_ microseconds: UInt64) -> String {
    let seconds = Int64(microseconds / 1_000_000)
    let milliseconds = Int(microseconds / 1000 % 1000)
    let days = seconds / 86_400
    let second = Int(seconds % 86_400)
    let (year, month, day) = civil(days)
    return
      "\(year)-\(two(month))-\(two(day)) \(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60))."
      + String(repeating: "0", count: 3 - String(milliseconds).count) + "\(milliseconds) UTC"
  }

  /// `20261127-210405`, for file names.
  static func compact(_ microseconds: UInt64) -> String {
    let seconds = Int64(microseconds / 1_000_000)
    let (year, month, day) = civil(seconds / 86_400)
    let second = Int(seconds % 86_400)
    return "\(year)\(two(month))\(two(day))-\(two(second / 3600))\(two(second / 60 % 60))\(two(second % 60))"
  }

  private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

  /// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
  static func civil(_ days: Int64) -> (Int, Int, Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
  }
}
