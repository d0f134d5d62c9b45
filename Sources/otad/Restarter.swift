import Logging
import OTABoot
import OTAStorage
import OTASystem

/// Carries out the configured restart once the boot state says what the next boot runs.
struct Restarter {
  let restart: BootConfiguration.Restart
  let backend: any BootBackend
  let logger: Logger

  /// Does not return unless the restart could not happen.
  func restart(into plan: BootPlan) throws -> Never {
    // What was printed so far (`otad boot`'s decision line) must not vanish with this process.
    ProcessEnvironment.flushStandardOutput()
    if let command = backend.restartCommand(for: plan) {
      logger.notice("restarting with \(command.joined(separator: " "))")
      try run(command)
      ProcessEnvironment.exit(OtadExitCode.success.rawValue)
    }
    switch restart {
    case .reexec:
      reexecute()
    case .reboot:
      logger.notice("rebooting")
      try run(["systemctl", "reboot"])
      ProcessEnvironment.exit(OtadExitCode.success.rawValue)
    case .command(let line):
      logger.notice("running the restart command", metadata: ["command": "\(line)"])
      try run(["/bin/sh", "-c", line])
      reexecute()
    }
  }

  /// Restarts this process in place: the same program and arguments, a fresh start.
  private func reexecute() -> Never {
    // The program's own path, not /proc/self/exe: the process keeps its name (comm is "otad"), which
    // is how `otad mark-good` and pgrep find it.
    var program = ((try? FileSystem.symbolicLinkTarget("/proc/self/exe")) ?? nil) ?? "/proc/self/exe"
    // A binary replaced while running (reinstalled) shows as "PATH (deleted)": run the new one.
    if program.hasSuffix(" (deleted)") { program = String(program.dropLast(" (deleted)".count)) }
    let failure = Spawn.replaceCurrentProcess(with: program, arguments: CommandLine.arguments)
    logger.critical("could not restart: \(failure)")
    ProcessEnvironment.exit(OtadExitCode.software.rawValue)
  }

  /// Runs a restart command to its end (a reboot command returns while the system goes down).
  private func run(_ command: [String]) throws {
    try ToolRunner(timeout: .seconds(120)).run(command[0], Array(command.dropFirst()))
  }
}
