/// What a libFuzzer wrapper does with violations: print them and stop the process with a trap,
/// which libFuzzer records as a crash and saves the input for.
public enum FuzzFailure {
  /// - Parameter trace: what led there, worked out only on failure (the receiver's events and actions).
  public static func trapIfAny(
    _ violations: [InvariantViolation], target: String, trace: () -> [String] = { [] }
  ) {
    guard !violations.isEmpty else { return }
    var text = "\(target): \(violations.count) invariant violation(s)\n"
    for violation in violations.prefix(20) { text += "  - \(violation)\n" }
    let steps = trace()
    if !steps.isEmpty {
      text += "last steps of \(steps.count):\n" + steps.suffix(40).joined(separator: "\n") + "\n"
    }
    fatalError(text)
  }
}
