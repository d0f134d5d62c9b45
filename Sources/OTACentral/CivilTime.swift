/// Dates and wall-clock times as seconds since 1970 UTC, without a calendar library: the
/// proleptic Gregorian calendar's days (Howard Hinnant's `days_from_civil` and its inverse), for
/// the times a central names to a device (SCHEDULE's window, Info's kept activation).
public struct CivilTime: Equatable, Sendable {
  public var year: Int
  public var month: Int
  public var day: Int
  public var hour: Int
  public var minute: Int
  public var second: Int

  public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
    self.year = year
    self.month = month
    self.day = day
    self.hour = hour
    self.minute = minute
    self.second = second
  }

  /// The civil time `seconds` after 1970-01-01T00:00:00 (of UTC, or of a local clock when the
  /// seconds were shifted by its offset).
  public init(seconds: Int64) {
    let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
    let rest = Int(seconds - Int64(days) * 86_400)
    let (year, month, day) = Self.civil(fromDays: days)
    self.init(
      year: year, month: month, day: day, hour: rest / 3600, minute: rest / 60 % 60, second: rest % 60)
  }

  /// Seconds since 1970-01-01T00:00:00 of the same clock.
  public var seconds: Int64 {
    Int64(Self.days(year: year, month: month, day: day)) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
  }

  /// Whether every field is in its range (the day within its month).
  public var isValid: Bool {
    (1...12).contains(month) && (1...Self.daysIn(year: year, month: month)).contains(day)
      && (0...23).contains(hour) && (0...59).contains(minute) && (0...59).contains(second)
  }

  /// `2026-11-30T02:00:00Z`, for UTC seconds.
  public static func iso8601(_ seconds: Int64) -> String {
    let time = CivilTime(seconds: seconds)
    return "\(pad(time.year, 4))-\(pad(time.month))-\(pad(time.day))T"
      + "\(pad(time.hour)):\(pad(time.minute)):\(pad(time.second))Z"
  }

  static func pad(_ value: Int, _ width: Int = 2) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }

  static func days(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  static func daysIn(year: Int, month: Int) -> Int {
    switch month {
    case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }
}
