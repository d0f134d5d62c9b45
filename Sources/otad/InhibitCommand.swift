import ArgumentParser
import OTADaemon
import OTASystem

struct InhibitCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "inhibit",
    abstract: "Run a command while holding an update lock: no update activates until it ends.",
    discussion: """
      As systemd-inhibit does for shutdowns: the lock file names this process, so it holds while
      the command runs and nothing after (a crash included). The device still receives and
      validates; it activates once no lock holds it (docs/OTAD.md, "The device has a say").
        otad inhibit --why "printing job 17" -- ./print-job 17
      """)

  @Option(help: "Why the update must wait: shown in otad status, the log and the central's answer.")
  var why: String

  @Option(help: ArgumentHelp("The lock's name (default: inhibit-PID).", valueName: "name"))
  var who: String?

  @Option(
    name: .customLong("for"),
    help: ArgumentHelp(
      "Let the lock lapse after this long even if the command still runs, e.g. 2h.", valueName: "duration"))
  var lapseAfter: String?

  @OptionGroup(title: "Storage") var storage: StorageOptions
  @OptionGroup(title: "Activation") var activation: ActivationOptions

  @Argument(parsing: .captureForPassthrough, help: "The command to run, after --.")
  var command: [String] = []

  func validate() throws {
    let words = command.first == "--" ? Array(command.dropFirst()) : command
    guard !words.isEmpty else {
      throw ValidationError("give the command to run after --, e.g. -- ./print-job 17")
    }
    if let who, who.isEmpty || who.contains("/") || who.hasPrefix(".") || who.count > 64 {
      throw ValidationError(
        "--who must be a plain name (no /, not starting with a dot, at most 64 characters)")
    }
  }

  func run() throws {
    let configuration = try storage.configuration(activation)
    let words = command.first == "--" ? Array(command.dropFirst()) : command
    let pid = ProcessEnvironment.processID
    let directory = configuration.lockDirectory
    if !FileSystem.exists(directory) { try FileSystem.makeDirectories(directory) }
    let path = "\(directory)/\(who ?? "inhibit-\(pid)")\(UpdateLockDirectory.suffix)"
    var lines = [
      "pid=\(pid)", "reason=\(why.unicodeScalars.filter { $0.value >= 0x20 }.map(String.init).joined())",
    ]
    if let lapseAfter {
      let seconds = try DaemonConfiguration.duration(lapseAfter).components.seconds
      lines.append("until=\(Int64(ProcessEnvironment.wallClockMicroseconds / 1_000_000) + seconds)")
    }
    do {
      let file = try FileDescriptor.open(path, [.writeOnly, .create, .exclusive, .noFollow], mode: 0o644)
      _ = try file.write(Array((lines.joined(separator: "\n") + "\n").utf8), at: 0)
      try file.close()
    } catch {
      throw ValidationError(
        "cannot create the update lock \(path): \(error). Is another holder using that name (--who)?")
    }
    defer { try? FileSystem.unlinkIfPresent(path) }
    let child = try Spawn(Self.resolve(words[0]), arguments: Array(words.dropFirst())).start()
    let ended = try child.waitForExit()
    switch ended {
    case .exited(let code): if code != 0 { throw ExitCode(code) }
    case .signalled(let signal): throw ExitCode(128 + signal)
    }
  }

  /// A program named without a slash, found on PATH as a shell would.
  static func resolve(_ program: String) -> String {
    guard !program.contains("/") else { return program }
    let path = ProcessEnvironment.value("PATH") ?? "/usr/local/bin:/usr/bin:/bin"
    for directory in path.split(separator: ":") where FileSystem.isExecutableFile("\(directory)/\(program)") {
      return "\(directory)/\(program)"
    }
    return program
  }
}
