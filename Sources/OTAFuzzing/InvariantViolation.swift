/// One broken rule found while running a fuzz input: which invariant, and what was seen.
/// The entry functions return a list of these; empty means the input was handled correctly.
public struct InvariantViolation: Equatable, Sendable, CustomStringConvertible {
  /// A short, stable name for the rule (`"round trip"`, `"running slot written"`, …).
  public var invariant: String
  public var detail: String

  public init(_ invariant: String, _ detail: String) {
    self.invariant = invariant
    self.detail = detail
  }

  public var description: String { "\(invariant): \(detail)" }
}
