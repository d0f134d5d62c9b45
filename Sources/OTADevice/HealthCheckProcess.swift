import CLinux

#if canImport(Glibc)
  import Glibc
#endif

/// The health check as a child process: `/bin/sh -c COMMAND` in its own process group, with the
/// trial's facts in its environment, and a pidfd that polls readable when it exits, so the daemon's
/// loop keeps serving while it runs. Its output goes where otad's goes (the journal, under systemd).
public final class HealthCheckProcess {
  public enum Exit: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    public var succeeded: Bool { self == .exited(0) }

    public var description: String {
      switch self {
      case .exited(let code): "exit status \(code)"
      case .signalled(let signal): "killed by signal \(signal)"
      }
    }
  }

  public let pid: pid_t
  /// Readable once the process has exited.
  public let descriptor: Int32
  private var reaped = false

  public init(command: String, environment: [String: String]) throws(HealthCheckError) {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // Its own process group, so that a timeout kills whatever the command started too; and the
    // signals otad blocks for its signalfd unblocked again.
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    posix_spawnattr_setsigmask(&attributes, &unblocked)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK))

    var merged: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
      let text = String(cString: pointer)
      if let equals = text.firstIndex(of: "=") {
        merged[String(text[..<equals])] = String(text[text.index(after: equals)...])
      }
      entry += 1
    }
    merged.merge(environment) { _, new in new }
    let arguments = ["/bin/sh", "-c", command]
    var argv = arguments.map { strdup($0) } + [nil]
    var envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    var child: pid_t = 0
    let spawned = posix_spawn(&child, "/bin/sh", nil, &attributes, &argv, &envp)
    guard spawned == 0 else {
      throw HealthCheckError("cannot start /bin/sh: \(String(cString: strerror(spawned)))")
    }
    pid = child
    let pidfd = clinux_pidfd_open(child)
    guard pidfd >= 0 else {
      let code = errno
      Glibc.kill(-child, SIGKILL)
      var status: Int32 = 0
      waitpid(child, &status, 0)
      throw HealthCheckError("pidfd_open: \(String(cString: strerror(code)))")
    }
    descriptor = pidfd
  }

  deinit {
    if !reaped { kill() }
    Glibc.close(descriptor)
  }

  /// The exit, once the process has ended (nil while it runs).
  public func reap() -> Exit? {
    guard !reaped else { return nil }
    var status: Int32 = 0
    let result = waitpid(pid, &status, WNOHANG)
    guard result == pid else { return nil }
    reaped = true
    // WIFEXITED and friends are macros Swift does not import.
    let signal = status & 0x7f
    return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
  }

  /// Kills the whole process group and reaps the process.
  public func kill() {
    guard !reaped else { return }
    Glibc.kill(-pid, SIGKILL)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    reaped = true
  }
}

public struct HealthCheckError: Error, Equatable, Sendable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
