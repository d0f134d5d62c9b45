import OTASystem

/// The health check as a child process: `/bin/sh -c COMMAND` in its own process group, with the
/// trial's facts in its environment, and a pidfd that polls readable when it exits, so the daemon's
/// loop keeps serving while it runs. Its output goes where otad's goes (the journal, under systemd).
public final class HealthCheckProcess {
  public typealias Exit = ChildTermination

  public let pid: Int32
  private let process: ChildProcessID
  private let pidfd: FileDescriptor
  /// Readable once the process has exited.
  public var descriptor: Int32 { pidfd.rawValue }
  private var reaped = false

  public init(command: String, environment: [String: String]) throws(HealthCheckError) {
    var merged: [String: String] = [:]
    for entry in ProcessEnvironment.entries {
      if let equals = entry.firstIndex(of: "=") {
        merged[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
      }
    }
    merged.merge(environment) { _, new in new }
    var spawn = Spawn(
      "/bin/sh", arguments: ["-c", command], environment: merged.map { "\($0.key)=\($0.value)" })
    // Its own process group, so that a timeout kills whatever the command started too.
    spawn.newProcessGroup = true
    do {
      process = try spawn.start()
    } catch {
      throw HealthCheckError("cannot start /bin/sh: \(error.errno)")
    }
    pid = process.rawValue
    do {
      pidfd = try process.openDescriptor()
    } catch {
      process.kill(group: true)
      _ = try? process.waitForExit()
      throw HealthCheckError("pidfd_open: \(error.errno)")
    }
  }

  deinit {
    if !reaped { kill() }
  }

  /// The exit, once the process has ended (nil while it runs).
  public func reap() -> Exit? {
    guard !reaped, let exit = try? process.exitIfEnded() else { return nil }
    reaped = true
    return exit
  }

  /// Kills the whole process group and reaps the process.
  public func kill() {
    guard !reaped else { return }
    process.kill(group: true)
    _ = try? process.waitForExit()
    reaped = true
  }
}

public struct HealthCheckError: Error, Equatable, Sendable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
