/// When the daemon's trace file is rewritten: at once for every step but a window, and for windows
/// at most every quarter second, longer as the trace grows (a 64 MiB push is thousands of windows:
/// the file is rewritten whole at most every two seconds). Times are wall-clock microseconds, which
/// may step back (NTP on a board without a clock): a time before the last write is due at once.
public enum DeviceTraceWritePacing {
  /// How long window events wait to be written, for a trace of `events` events.
  public static func windowInterval(events: Int) -> UInt64 {
    min(2_000_000, max(250_000, UInt64(max(0, events)) * 250))
  }

  /// Whether a window event at `now` is written, the last write having been at `lastWrite`.
  public static func windowWriteDue(now: UInt64, lastWrite: UInt64, events: Int) -> Bool {
    now < lastWrite || now - lastWrite >= windowInterval(events: events)
  }
}
