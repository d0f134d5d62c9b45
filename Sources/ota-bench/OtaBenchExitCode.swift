import OTASystem

/// Every way `ota-bench` ends.
enum OtaBenchExitCode: Int32 {
  case success = 0
  /// A --plan or --delta run failed (a file unreadable, a push that did not succeed).
  case failed = 1
  /// Bad arguments.
  case usage = 2

  /// Ends the process with this code.
  func exit() -> Never { ProcessEnvironment.exit(rawValue) }
}
