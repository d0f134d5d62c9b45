/// Every way `otad` ends (docs/OTAD.md), sysexits(3)'s numbers. Scripts and systemd units depend on
/// them: never renumber. `otad --help` lists them from here.
enum OtadExitCode: Int32, CaseIterable {
  /// Stopped by SIGTERM or SIGINT, or a restart command that ran (the next boot takes over).
  case success = 0
  /// A command that did not do what it was asked, said on standard error: the daemon's fault
  /// control refused `otad fault`'s command, or the storage could not be read.
  case failure = 1
  /// Bad arguments or configuration, refused before anything moves (ArgumentParser's
  /// `ValidationError` exits with it).
  case usage = 64
  /// The restart could not happen: the program could not execute itself again (EX_SOFTWARE).
  case software = 70
  /// The storage failed: a read-only or full state directory (EX_IOERR).
  case ioError = 74

  /// What the code means, in a few words (the help's list).
  var meaning: String {
    switch self {
    case .success: "success; otad run: stopped by SIGTERM or SIGINT, or restarted by a restart command"
    case .failure: "the command failed, said on standard error (otad fault: the daemon refused it)"
    case .usage:
      "bad arguments or configuration, refused before anything moves (also mark-good of a trial whose seal broke)"
    case .software: "the restart could not execute otad again"
    case .ioError: "the storage failed: a read-only or full state directory or slot"
    }
  }

  /// The list for `--help`: "0 success, 1 …, 64 …".
  static var helpList: String {
    allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: "; ")
  }
}
