import OTASystem
import Synchronization

/// A child the lab runs (otad or otactl) in a process group of its own, its output to a file: the
/// lab can cut it off at once (SIGKILL to the group: a power cut takes the health check too).
final class LabProcess: Sendable {
  let id: ChildProcessID
  private let status = Mutex<ChildTermination?>(nil)

  init(_ program: String, _ arguments: [String], output path: String) throws {
    let output = try FileDescriptor.open(path, [.writeOnly, .create, .truncate])
    defer { try? output.close() }
    var spawn = Spawn(program, arguments: arguments)
    spawn.standardInput = .null
    spawn.standardOutput = .descriptor(output.rawValue)
    spawn.standardError = .descriptor(output.rawValue)
    spawn.newProcessGroup = true
    id = try spawn.start()
  }

  /// Nil while it runs; how it ended once it has (reaped once, remembered).
  func ended() -> ChildTermination? {
    status.withLock { known in
      if known == nil { known = (try? id.exitIfEnded()) ?? nil }
      return known
    }
  }

  /// SIGKILL to its group, then reaped.
  func kill() {
    guard ended() == nil else { return }
    id.kill(group: true)
    let end = (try? id.waitForExit()) ?? .signalled(9)
    status.withLock { $0 = end }
  }
}
