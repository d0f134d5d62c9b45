import Logging

/// sd-daemon(3)'s priority prefixes: a line written to the journal's stream that starts with `<N>`
/// is logged at syslog priority N, so that `journalctl -p warning` finds it.
public enum JournalPriority {
  /// The syslog priority of a swift-log level: trace and debug 7 (LOG_DEBUG), info 6, notice 5,
  /// warning 4, error 3, critical 2 (LOG_CRIT).
  public static func number(_ level: Logger.Level) -> Int {
    switch level {
    case .trace, .debug: 7
    case .info: 6
    case .notice: 5
    case .warning: 4
    case .error: 3
    case .critical: 2
    }
  }

  /// `text` with the level's prefix on each of its lines: the journal takes every line as an entry
  /// of its own, so a line without a prefix would fall back to the unit's default priority.
  public static func prefixed(_ text: String, level: Logger.Level) -> String {
    let prefix = "<\(number(level))>"
    return text.split(separator: "\n", omittingEmptySubsequences: false).map { prefix + $0 }
      .joined(separator: "\n")
  }
}
