/// DDI's polling interval, `config.polling.sleep`: "HH:MM:SS".
public enum DDIPollingInterval {
  /// The interval, or nil when the text is not HH:MM:SS with minutes and seconds below 60.
  public static func parse(_ text: String) -> Duration? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 3,
      parts.allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.allSatisfy(\.isASCIIDigit) })
    else { return nil }
    let numbers = parts.compactMap { Int($0) }
    guard numbers.count == 3, numbers[1] < 60, numbers[2] < 60 else { return nil }
    return .seconds(numbers[0] * 3600 + numbers[1] * 60 + numbers[2])
  }

  /// The interval the gateway waits: the server's, kept within `bounds` (a server that asks for 0 s
  /// must not turn the gateway into a busy loop, nor one that asks for a week leave devices unseen).
  public static func clamped(_ interval: Duration?, default fallback: Duration, bounds: ClosedRange<Duration>)
    -> Duration
  {
    min(max(interval ?? fallback, bounds.lowerBound), bounds.upperBound)
  }

  /// What is left of `sleep` once a cycle that polled every target as it began has taken `cycle`:
  /// hawkBit's sleep is the time between two polls of a target, so a cycle that pushed for longer
  /// than it polls again at once (never a busy loop: a cycle that takes no time waits all of it).
  public static func remaining(of sleep: Duration, after cycle: Duration) -> Duration {
    max(.zero, sleep - max(.zero, cycle))
  }
}

extension Character {
  var isASCIIDigit: Bool { isASCII && isNumber }
}
