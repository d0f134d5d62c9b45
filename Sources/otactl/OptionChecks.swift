import ArgumentParser

/// The checks numeric options get before anything moves: an absurd value is a usage error (exit 64)
/// that names the flag, what was given and what is allowed, never a surprise later in the push.
enum OptionChecks {
  /// A number of seconds: finite, more than 0, at most `maximum`.
  static func seconds(_ value: Double, _ flag: String, maximum: Double) throws {
    guard value.isFinite, value > 0, value <= maximum else {
      throw ValidationError(
        "\(flag) \(value.formatted): give a number of seconds more than 0 and at most \(maximum.formatted)")
    }
  }

  /// A count: `range.lowerBound` to `range.upperBound`.
  static func count(_ value: Int, _ flag: String, _ range: ClosedRange<Int>) throws {
    guard range.contains(value) else {
      throw ValidationError(
        "\(flag) \(value): give a whole number from \(range.lowerBound) to \(range.upperBound)")
    }
  }
}

extension Double {
  /// 5 rather than 5.0, and nan, inf as Swift spells them.
  fileprivate var formatted: String {
    guard isFinite, self == rounded(), abs(self) < 1e15 else { return "\(self)" }
    return "\(Int64(self))"
  }
}
