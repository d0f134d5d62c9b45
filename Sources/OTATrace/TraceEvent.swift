/// One event of the Chrome Trace Event Format: a slice begun or ended, a complete slice with its
/// duration, an instant, or metadata (a process's or a thread's name). Times are microseconds.
public struct TraceEvent: Equatable, Sendable {
  /// The event's `ph` field.
  public enum Phase: String, Equatable, Sendable, Codable {
    case begin = "B"
    case end = "E"
    case complete = "X"
    case instant = "i"
    case metadata = "M"
  }

  public var name: String
  public var category: String
  public var phase: Phase
  /// `ts`, in microseconds.
  public var timestamp: UInt64
  /// `dur`, in microseconds: complete slices only.
  public var duration: UInt64?
  public var pid: Int
  public var tid: Int
  /// `args`, in the order given.
  public var args: [TraceArgument]

  public init(
    name: String, category: String = "ota", phase: Phase, timestamp: UInt64, duration: UInt64? = nil,
    pid: Int, tid: Int, args: [TraceArgument] = []
  ) {
    self.name = name
    self.category = category
    self.phase = phase
    self.timestamp = timestamp
    self.duration = duration
    self.pid = pid
    self.tid = tid
    self.args = args
  }

  /// When the slice ends: `ts + dur` for a complete slice, `ts` otherwise.
  public var endTimestamp: UInt64 { timestamp + (duration ?? 0) }
}

/// One named value of an event's `args`.
public struct TraceArgument: Equatable, Sendable {
  public var key: String
  public var value: TraceValue

  public init(_ key: String, _ value: TraceValue) {
    self.key = key
    self.value = value
  }
}

/// What an argument holds: JSON's scalars.
public enum TraceValue: Equatable, Sendable {
  case string(String)
  case integer(Int64)
  case number(Double)
  case bool(Bool)
}

extension TraceValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
  public init(stringLiteral value: String) { self = .string(value) }
  public init(integerLiteral value: Int64) { self = .integer(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
}
