/// Every way `otad` ends (docs/OTAD.md), sysexits(3)'s numbers. Scripts and systemd units depend on
/// them: never renumber.
enum OtadExitCode: Int32, CaseIterable {
  /// Stopped by SIGTERM or SIGINT, or a restart command that ran (the next boot takes over).
  case success = 0
  /// Bad arguments or configuration, refused before anything moves (ArgumentParser's
  /// `ValidationError` exits with it).
  case usage = 64
  /// The restart could not happen: the program could not execute itself again (EX_SOFTWARE).
  case software = 70
  /// The storage failed: a read-only or full state directory (EX_IOERR).
  case ioError = 74
}
