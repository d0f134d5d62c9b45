/// Collects the events of one process's trace: slices begun and ended per thread (kept balanced
/// and nested), complete slices, instants and names. Bounded: past `limit` events it keeps counting
/// but stores nothing more, and the document says how many were left out. Pure: the caller gives
/// every time; `document()` is the JSON.
public struct TraceBuilder: Sendable {
  public let pid: Int
  public let limit: Int
  public private(set) var events: [TraceEvent] = []
  /// Events left out once `limit` was reached.
  public private(set) var dropped = 0
  /// The slices begun and not yet ended, per thread, innermost last, and whether each begin was
  /// stored (past the limit it was not, and neither is its end).
  private var open: [Int: [(name: String, stored: Bool)]] = [:]
  /// The latest time seen: where open slices are closed at the end.
  public private(set) var latest: UInt64 = 0

  public init(pid: Int, limit: Int = 50_000) {
    self.pid = pid
    self.limit = max(16, limit)
  }

  /// Names the process (`process_name` metadata).
  public mutating func nameProcess(_ name: String) {
    add(
      TraceEvent(
        name: "process_name", category: "", phase: .metadata, timestamp: 0, pid: pid, tid: 0,
        args: [TraceArgument("name", .string(name))]))
  }

  /// Names a thread, the track its events are drawn on (`thread_name` metadata).
  public mutating func nameThread(_ tid: Int, _ name: String) {
    add(
      TraceEvent(
        name: "thread_name", category: "", phase: .metadata, timestamp: 0, pid: pid, tid: tid,
        args: [TraceArgument("name", .string(name))]))
  }

  /// Begins a slice on `tid`; it ends with `end(tid:at:)` (or at `finish`).
  public mutating func begin(_ name: String, tid: Int, at time: UInt64, args: [TraceArgument] = []) {
    let before = events.count
    add(TraceEvent(name: name, phase: .begin, timestamp: at(time), pid: pid, tid: tid, args: args))
    open[tid, default: []].append((name, events.count > before))
  }

  /// Ends the innermost open slice on `tid`; nothing when none is open.
  public mutating func end(tid: Int, at time: UInt64, args: [TraceArgument] = []) {
    guard let slice = open[tid]?.popLast() else { return }
    let timestamp = at(time)
    // The end of a stored begin is stored even past the limit: every stored begin has its end.
    guard slice.stored else { return }
    events.append(
      TraceEvent(name: slice.name, phase: .end, timestamp: timestamp, pid: pid, tid: tid, args: args))
  }

  /// The name of the innermost open slice on `tid`.
  public func innermost(tid: Int) -> String? { open[tid]?.last?.name }

  /// A complete slice from `start` to `end` (an end before the start is taken as the start).
  public mutating func complete(
    _ name: String, tid: Int, from start: UInt64, to end: UInt64, args: [TraceArgument] = []
  ) {
    let begin = at(start)
    let finish = at(max(end, start))
    add(
      TraceEvent(
        name: name, phase: .complete, timestamp: begin, duration: finish - begin, pid: pid, tid: tid,
        args: args))
  }

  /// An instant on `tid`'s track.
  public mutating func instant(_ name: String, tid: Int, at time: UInt64, args: [TraceArgument] = []) {
    add(TraceEvent(name: name, phase: .instant, timestamp: at(time), pid: pid, tid: tid, args: args))
  }

  /// Ends every open slice at `time` (or at the latest time seen): a trace written while the
  /// process runs, or at its end, is balanced.
  public func closed(at time: UInt64? = nil) -> [TraceEvent] {
    let end = max(time ?? latest, latest)
    var closing: [TraceEvent] = []
    for tid in open.keys.sorted() {
      for slice in (open[tid] ?? []).reversed() where slice.stored {
        closing.append(TraceEvent(name: slice.name, phase: .end, timestamp: end, pid: pid, tid: tid))
      }
    }
    return events + closing
  }

  /// The JSON document: `{"traceEvents": [...]}`, with the open slices closed at `time`, after
  /// `earlier` events as written before (`TraceJSON.eventLines`: a trace a restarted process
  /// continues).
  public func document(closingAt time: UInt64? = nil, after earlier: [String] = []) -> String {
    TraceJSON.document(closed(at: time), dropped: dropped, after: earlier)
  }

  private mutating func at(_ time: UInt64) -> UInt64 {
    latest = max(latest, time)
    return time
  }

  private mutating func add(_ event: TraceEvent) {
    guard events.count < limit else {
      dropped += 1
      return
    }
    events.append(event)
  }
}
