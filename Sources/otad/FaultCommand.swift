import ArgumentParser
import OTADaemon
import OTAFaults
import OTASystem

/// `otad fault add|remove|clear|list`: talks to the running daemon's fault control
/// (docs/APP-TESTING.md), the socket `faults.sock` in its state directory.
struct FaultCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fault",
    abstract: "Set, list or clear faults on a running otad (a test device only: docs/APP-TESTING.md).",
    discussion: """
      The daemon must allow faults ([faults] allow = true, or otad run --allow-faults). A fault is one
      line: an action, then settings.
        drop-link          at=REQUEST or after=BYTES|PERCENT%
        refuse             at=REQUEST status=NAME (OTA) or rc=N (SMP)
        delay              by=250ms|2s [at=REQUEST] [after=...]
        lose-chunk         [after=...]        corrupt-chunk   [after=...]
        restart            at=REQUEST or after=...
        power-cut          at=REQUEST or after=...
        fail-health-check  (the next trial)   storage-full    [after=...]
      Each fires once unless told: times=N, times=always, or chance=0.25 seed=7 [times=N].
      REQUEST: \(FaultRequest.names.joined(separator: ", ")).

      Examples:
        otad fault --state-dir /var/lib/otad add drop-link after=37%
        otad fault --state-dir /var/lib/otad add refuse at=activate status=busy times=always
        otad fault --state-dir /var/lib/otad list
        otad fault --state-dir /var/lib/otad clear
      """)

  @OptionGroup var state: StateDirectoryOptions

  @Argument(help: "add FAULT..., remove N, clear or list.")
  var words: [String]

  func run() throws {
    let command: FaultControlCommand
    do {
      command = try FaultControlCommand(line: words.joined(separator: " "))
    } catch {
      throw ValidationError("\(error)")
    }
    let stateDirectory = try state.stateDirectory()
    let answer: String
    do {
      answer = try FaultControlClient.ask(command, stateDirectory: stateDirectory)
    } catch {
      throw ValidationError("\(error)")
    }
    print(answer, terminator: answer.hasSuffix("\n") ? "" : "\n")
    if answer.hasPrefix("error:") { throw ExitCode(OtadExitCode.failure.rawValue) }
  }
}
