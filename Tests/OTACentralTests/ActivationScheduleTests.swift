import OTACentral
import OTAWire
import Testing

/// `--activate-at`/`--until` and `--window`, parsed and resolved with an injected clock and time
/// zone: SCHEDULE's window in seconds since 1970 UTC ([P-REQ-15]).
@Suite struct ActivationScheduleTests {
  /// 2026-11-29T17:00:00Z.
  static let now: Int64 = 1_795_971_600
  static let utc: UTCOffset = { _ in 0 }
  /// Central European Time: +1 h in winter, +2 h from 2027-03-28T01:00:00Z.
  static let berlin: UTCOffset = { $0 >= 1_806_195_600 ? 7200 : 3600 }

  static func resolve(_ schedule: ActivationSchedule, now: Int64 = now, offset: UTCOffset = utc) throws
    -> ActivationWindow
  {
    try schedule.resolve(now: now, offset: offset)
  }

  @Test func civilTimeRoundTripsAndFormats() {
    #expect(CivilTime(year: 2026, month: 11, day: 30, hour: 2).seconds == 1_796_004_000)
    #expect(CivilTime(seconds: 1_796_004_000) == CivilTime(year: 2026, month: 11, day: 30, hour: 2))
    #expect(CivilTime.iso8601(0) == "1970-01-01T00:00:00Z")
    #expect(CivilTime.iso8601(951_782_400) == "2000-02-29T00:00:00Z")
    #expect(CivilTime.iso8601(Self.now) == "2026-11-29T17:00:00Z")
  }

  @Test func anAbsoluteTimeInUTCAnOffsetOrLocalTime() throws {
    // [P-REQ-15]
    let utc = try ActivationTime(parsing: "2026-11-30T02:00:00Z")
    #expect(
      try Self.resolve(.at(utc, until: nil))
        == ActivationWindow(notBefore: 1_796_004_000, notAfter: nil, permanent: false))
    let offset = try ActivationTime(parsing: "2026-11-30T03:00+01:00")
    #expect(offset.resolve(now: Self.now, offset: Self.utc) == 1_796_004_000)
    // No suffix: the local time zone's (Berlin: +1 h in November).
    let local = try ActivationTime(parsing: "2026-11-30T03:00")
    #expect(local.resolve(now: Self.now, offset: Self.berlin) == 1_796_004_000)
    // In summer time, +2 h.
    #expect(
      try ActivationTime(parsing: "2027-07-01T12:00").resolve(now: Self.now, offset: Self.berlin)
        == CivilTime(year: 2027, month: 7, day: 1, hour: 10).seconds)
  }

  @Test func aRelativeTimeCountsFromNow() throws {
    #expect(try ActivationTime(parsing: "+2h") == .relative(seconds: 7200))
    #expect(try ActivationTime(parsing: "+30m") == .relative(seconds: 1800))
    #expect(try ActivationTime(parsing: "+1h30m") == .relative(seconds: 5400))
    #expect(try ActivationTime(parsing: "+1d") == .relative(seconds: 86_400))
    let window = try Self.resolve(.at(.relative(seconds: 7200), until: .relative(seconds: 9000)))
    #expect(window.notBefore == UInt32(Self.now + 7200) && window.notAfter == UInt32(Self.now + 9000))
  }

  @Test func unreadableTimesAreRefusedWithWhatTheyTake() {
    for text in [
      "tomorrow", "+2", "+h", "+2x", "2026-11-31T02:00Z", "2026-11-30T25:00Z", "2026-11-30", "+-2h",
      "2026-1-30T02:00Z",
    ] {
      #expect(throws: ActivationScheduleError.self, "\(text)") { try ActivationTime(parsing: text) }
    }
  }

  @Test func aTimeInThePastOrAnEndBeforeTheStartIsRefused() throws {
    let past = try ActivationTime(parsing: "2026-11-29T16:00:00Z")
    #expect(throws: ActivationScheduleError.self) { try Self.resolve(.at(past, until: nil)) }
    // A moment ago is now (a command line typed a moment ago).
    let justNow = ActivationTime.relative(seconds: -30)
    #expect(try Self.resolve(.at(justNow, until: nil)).notBefore == UInt32(Self.now))
    let start = try ActivationTime(parsing: "2026-11-30T02:00:00Z")
    let end = try ActivationTime(parsing: "2026-11-30T01:00:00Z")
    #expect(throws: ActivationScheduleError.self) { try Self.resolve(.at(start, until: end)) }
  }

  @Test func aDailyWindowIsItsNextOccurrenceThatHasNotEnded() throws {
    // [P-HOLD-4]
    let window = try DailyWindow(parsing: "02:00-04:00Z")
    #expect(window == DailyWindow(start: 120, end: 240, utc: true))
    // At 17:00 UTC today's has ended: tomorrow's.
    #expect(
      try Self.resolve(.window(window))
        == ActivationWindow(notBefore: 1_796_004_000, notAfter: 1_796_011_200, permanent: false))
    // Inside it now: from now to its end.
    let inside = Int64(1_796_004_000 + 1800)
    #expect(
      try Self.resolve(.window(window), now: inside)
        == ActivationWindow(notBefore: UInt32(inside), notAfter: 1_796_011_200, permanent: false))
  }

  @Test func aLocalWindowFollowsTheTimeZoneAndOneAcrossMidnightEndsTheNextDay() throws {
    // [P-HOLD-4]
    let local = try DailyWindow(parsing: "03:00-05:00")
    #expect(!local.utc)
    // 03:00 in Berlin in November is 02:00 UTC.
    #expect(
      try Self.resolve(.window(local), offset: Self.berlin)
        == ActivationWindow(notBefore: 1_796_004_000, notAfter: 1_796_011_200, permanent: false))
    let night = try DailyWindow(parsing: "22:00-02:00Z")
    let tonight = CivilTime(year: 2026, month: 11, day: 29, hour: 22).seconds
    #expect(
      try Self.resolve(.window(night))
        == ActivationWindow(
          notBefore: UInt32(tonight), notAfter: UInt32(tonight + 4 * 3600), permanent: false))
    // At 01:00 the night's window that began yesterday is still open: from now.
    let oneAM = CivilTime(year: 2026, month: 11, day: 30, hour: 1).seconds
    #expect(
      try Self.resolve(.window(night), now: oneAM)
        == ActivationWindow(notBefore: UInt32(oneAM), notAfter: UInt32(oneAM + 3600), permanent: false))
  }

  @Test func unreadableOrEmptyWindowsAreRefused() {
    for text in ["02:00", "2:00-04:00", "02:00-04:60", "25:00-04:00", "02:00-02:00", "02:00Z-04:00", "a-b"] {
      #expect(throws: ActivationScheduleError.self, "\(text)") { try DailyWindow(parsing: text) }
    }
    #expect(throws: Never.self) { try DailyWindow(parsing: "22:00-24:00") }
    #expect(throws: Never.self) { try DailyWindow(parsing: "02:00Z-04:00Z") }
  }
}
