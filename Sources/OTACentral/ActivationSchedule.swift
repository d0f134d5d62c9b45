import OTAWire

/// When a central asks a device to activate (`otactl push --activate-at/--until` or `--window`,
/// and `otactl activate --at/--until` or `--window`): parsed from the options (syntax only, so a
/// command line in the docs stays valid tomorrow), then resolved against the wall clock when the
/// command runs into SCHEDULE's window (PROTOCOL.md, [P-REQ-15]).
public enum ActivationSchedule: Equatable, Sendable {
  /// From a time on, until another (nil: no end).
  case at(ActivationTime, until: ActivationTime?)
  /// The next occurrence of a daily window that has not ended.
  case window(DailyWindow)

  /// How many seconds a time may lie in the past and still be taken (a command line typed a
  /// moment ago); older is a mistake, said before anything is sent.
  public static let pastTolerance: Int64 = 60

  /// SCHEDULE's window: seconds since 1970 UTC. `now` is the wall clock in those seconds;
  /// `offset` the local clock's offset east of UTC in force at an instant.
  public func resolve(now: Int64, offset: UTCOffset, permanent: Bool = false) throws(ActivationScheduleError)
    -> ActivationWindow
  {
    let start: Int64
    let end: Int64?
    switch self {
    case .at(let time, let until):
      start = time.resolve(now: now, offset: offset)
      end = until?.resolve(now: now, offset: offset)
      guard start >= now - Self.pastTolerance else {
        throw ActivationScheduleError(
          "--activate-at \(CivilTime.iso8601(start)) is in the past (it is \(CivilTime.iso8601(now)) now)")
      }
      if let end, end <= max(start, now) {
        throw ActivationScheduleError(
          "--until \(CivilTime.iso8601(end)) must come after --activate-at \(CivilTime.iso8601(start)) "
            + "and after now (\(CivilTime.iso8601(now)))")
      }
    case .window(let window):
      (start, end) = window.next(now: now, offset: offset)
    }
    let notBefore = max(start, now)
    guard notBefore >= 0, (end ?? notBefore) <= Int64(UInt32.max) else {
      throw ActivationScheduleError(
        "the time is beyond what SCHEDULE carries (seconds since 1970 in 32 bits)")
    }
    return ActivationWindow(
      notBefore: UInt32(notBefore), notAfter: end.map { UInt32($0) }, permanent: permanent)
  }
}

/// The local clock's offset east of UTC, in seconds, in force at an instant (seconds since 1970
/// UTC): the command line's time zone, injected so that the resolution stays pure.
public typealias UTCOffset = @Sendable (Int64) -> Int

/// A time option that cannot be read or used: the message names the option and what it takes.
public struct ActivationScheduleError: Error, Equatable, Sendable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// `2026-11-30T02:00:00Z` (UTC), `2026-11-30T03:00+01:00` (that offset), `2026-11-30T02:00`
/// (the local time zone), or `+2h`, `+30m`, `+1h30m`, `+1d`, `+90s` (from when the command runs).
public enum ActivationTime: Equatable, Sendable {
  /// A civil time, of UTC shifted by `utcOffset` seconds, or of the local time zone (nil).
  case absolute(CivilTime, utcOffset: Int?)
  case relative(seconds: Int64)

  public init(parsing text: String) throws(ActivationScheduleError) {
    let fail = ActivationScheduleError(
      "\(text): give a time as 2026-11-30T02:00:00Z (UTC), 2026-11-30T03:00:00+01:00, 2026-11-30T02:00 "
        + "(local time), or from now as +2h, +30m, +1h30m, +1d")
    if text.hasPrefix("+") {
      guard let seconds = Self.duration(text.dropFirst()) else { throw fail }
      self = .relative(seconds: seconds)
      return
    }
    var rest = Substring(text)
    var offset: Int?
    if rest.hasSuffix("Z") || rest.hasSuffix("z") {
      offset = 0
      rest = rest.dropLast()
    } else if rest.count > 16, let sign = rest.dropFirst(16).lastIndex(where: { $0 == "+" || $0 == "-" }) {
      guard let parsed = Self.offset(rest[sign...]) else { throw fail }
      offset = parsed
      rest = rest[..<sign]
    }
    guard let time = Self.civil(rest) else { throw fail }
    self = .absolute(time, utcOffset: offset)
  }

  /// Seconds since 1970 UTC.
  public func resolve(now: Int64, offset: UTCOffset) -> Int64 {
    switch self {
    case .relative(let seconds): now + seconds
    case .absolute(let time, let fixed?): time.seconds - Int64(fixed)
    case .absolute(let time, nil): Self.utc(local: time.seconds, offset: offset)
    }
  }

  /// The UTC instant a local clock shows as `local`: its offset looked up twice, so that a time
  /// near a change of offset (summer time) takes the offset in force at the instant itself.
  static func utc(local: Int64, offset: UTCOffset) -> Int64 {
    let guess = local - Int64(offset(local))
    return local - Int64(offset(guess))
  }

  /// `YYYY-MM-DDTHH:MM[:SS]`.
  private static func civil(_ text: Substring) -> CivilTime? {
    let halves = text.split(separator: "T", omittingEmptySubsequences: false)
    guard halves.count == 2 else { return nil }
    let date = halves[0].split(separator: "-", omittingEmptySubsequences: false)
    let clock = halves[1].split(separator: ":", omittingEmptySubsequences: false)
    guard date.count == 3, date[0].count == 4, date[1].count == 2, date[2].count == 2,
      clock.count == 2 || clock.count == 3, clock.allSatisfy({ $0.count == 2 })
    else { return nil }
    let values = (date + clock).compactMap { $0.allSatisfy { $0.isASCII && $0.isNumber } ? Int($0) : nil }
    guard values.count == date.count + clock.count else { return nil }
    let time = CivilTime(
      year: values[0], month: values[1], day: values[2], hour: values[3], minute: values[4],
      second: values.count > 5 ? values[5] : 0)
    return time.isValid ? time : nil
  }

  /// `+01:00`, `-0530`, `+01`: seconds east of UTC.
  private static func offset(_ text: Substring) -> Int? {
    let sign = text.first == "-" ? -1 : 1
    let digits = text.dropFirst().filter { $0 != ":" }
    guard digits.count == 2 || digits.count == 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
      let hours = Int(digits.prefix(2)),
      let minutes = Int(digits.dropFirst(2).isEmpty ? "0" : digits.dropFirst(2)),
      hours <= 14, minutes < 60
    else { return nil }
    return sign * (hours * 3600 + minutes * 60)
  }

  /// `2h`, `30m`, `1h30m`, `1d`, `90s`: seconds, at most a year.
  static func duration(_ text: Substring) -> Int64? {
    var total: Int64 = 0
    var number: Int64?
    for character in text {
      if let digit = character.wholeNumberValue, character.isASCII {
        let value = (number ?? 0) * 10 + Int64(digit)
        guard value <= 366 * 86_400 else { return nil }
        number = value
        continue
      }
      let unit: Int64
      switch character {
      case "s": unit = 1
      case "m": unit = 60
      case "h": unit = 3600
      case "d": unit = 86_400
      default: return nil
      }
      guard let value = number else { return nil }
      total += value * unit
      number = nil
    }
    guard number == nil, !text.isEmpty, total <= 366 * 86_400 else { return nil }
    return total
  }
}

/// A daily window, `02:00-04:00` in the local time zone or `02:00-04:00Z` in UTC; one that ends
/// before it starts runs past midnight (`22:00-02:00`).
public struct DailyWindow: Equatable, Sendable {
  /// Minutes after midnight.
  public var start: Int
  public var end: Int
  public var utc: Bool

  public init(start: Int, end: Int, utc: Bool) {
    self.start = start
    self.end = end
    self.utc = utc
  }

  public init(parsing text: String) throws(ActivationScheduleError) {
    let fail = ActivationScheduleError(
      "\(text): give a daily window as HH:MM-HH:MM, local time (02:00-04:00), or UTC with Z (02:00-04:00Z)")
    var rest = Substring(text)
    var utc = false
    if rest.hasSuffix("Z") {
      utc = true
      rest = rest.dropLast()
    }
    let ends = rest.split(separator: "-", omittingEmptySubsequences: false)
    guard ends.count == 2 else { throw fail }
    // Z may follow the start too (02:00Z-04:00Z), not the start alone.
    var first = ends[0]
    if first.hasSuffix("Z") {
      guard utc else { throw fail }
      first = first.dropLast()
    }
    guard let start = Self.minutes(first, allowMidnightEnd: false),
      let end = Self.minutes(ends[1], allowMidnightEnd: true)
    else { throw fail }
    guard start != end % 1440 else {
      throw ActivationScheduleError("\(text): the window is empty (it starts where it ends)")
    }
    self.init(start: start, end: end, utc: utc)
  }

  /// `HH:MM`: minutes after midnight (`24:00` as an end).
  private static func minutes(_ text: Substring, allowMidnightEnd: Bool) -> Int? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let hours = Int(parts[0]),
      let minutes = Int(parts[1]),
      minutes < 60, hours < 24 || (allowMidnightEnd && hours == 24 && minutes == 0)
    else { return nil }
    return hours * 60 + minutes
  }

  /// The next occurrence that has not ended, in seconds since 1970 UTC: when now is inside one,
  /// it starts now.
  public func next(now: Int64, offset: UTCOffset) -> (start: Int64, end: Int64) {
    func toUTC(_ local: Int64) -> Int64 { utc ? local : ActivationTime.utc(local: local, offset: offset) }
    let today = CivilTime(seconds: now + (utc ? 0 : Int64(offset(now))))
    let midnight = Int64(CivilTime.days(year: today.year, month: today.month, day: today.day)) * 86_400
    let length = Int64(((end - start) % 1440 + 1440) % 1440)
    for day in -1...1 {
      let localStart = midnight + Int64(day) * 86_400 + Int64(start) * 60
      let from = toUTC(localStart)
      let until = toUTC(localStart + (length == 0 ? 86_400 : length * 60))
      if until > now { return (max(from, now), until) }
    }
    // Unreachable: tomorrow's occurrence ends after now.
    let from = toUTC(midnight + 86_400 + Int64(start) * 60)
    return (from, from + length * 60)
  }
}
