// The one way this project starts a program: posix_spawn with its standard descriptors chosen, the
// signal state reset (nothing blocked, default dispositions: a daemon blocks and ignores signals a
// child should not inherit), and optionally a process group of its own.
import CLinux
import Glibc

/// How a child process ended.
public enum ChildTermination: Equatable, Sendable, CustomStringConvertible {
  case exited(Int32)
  case signalled(Int32)

  public var succeeded: Bool { self == .exited(0) }

  public var description: String {
    switch self {
    case .exited(let code): "exit status \(code)"
    case .signalled(let signal): "killed by signal \(signal)"
    }
  }

  /// `WIFEXITED`/`WEXITSTATUS`/`WTERMSIG`, which are macros Swift does not import.
  init(waitStatus status: Int32) {
    let signal = status & 0x7f
    self = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
  }
}

/// A program to start.
public struct Spawn: Sendable {
  /// Where one of the child's standard descriptors comes from.
  public enum Redirect: Sendable {
    /// The same as this process's.
    case inherit
    /// /dev/null.
    case null
    /// This descriptor (duplicated onto 0, 1 or 2 in the child).
    case descriptor(Int32)
  }

  public var executable: String
  /// argv[1...]; argv[0] is `executable`.
  public var arguments: [String]
  /// The child's whole environment as `NAME=value` entries.
  public var environment: [String]
  public var standardInput: Redirect = .inherit
  public var standardOutput: Redirect = .inherit
  public var standardError: Redirect = .inherit
  /// Its own process group, so that killing the group kills whatever it started too.
  public var newProcessGroup = false

  public init(
    _ executable: String, arguments: [String] = [], environment: [String] = ProcessEnvironment.entries
  ) {
    self.executable = executable
    self.arguments = arguments
    self.environment = environment
  }

  /// Starts it. ETXTBSY (somebody has the program open for writing, often only for an instant: a
  /// package upgrade replacing it, or a child forked elsewhere inheriting a descriptor of a file
  /// being written) is retried for about a second. A missing program fails with ENOENT.
  public func start() throws(SystemError) -> ChildProcessID {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (target, redirect) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
      switch redirect {
      case .inherit: break
      case .null:
        posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
      case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, target)
      }
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var all = sigset_t()
    var none = sigset_t()
    sigfillset(&all)
    sigemptyset(&none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setsigmask(&attributes, &none)
    var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
    if newProcessGroup {
      posix_spawnattr_setpgroup(&attributes, 0)
      flags |= POSIX_SPAWN_SETPGROUP
    }
    posix_spawnattr_setflags(&attributes, Int16(flags))

    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup($0) } + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    var pid: pid_t = 0
    var retries = 0
    while true {
      // posix_spawn returns the error instead of setting errno.
      let result = SystemCalls.perform(.spawn, path: executable) { _ in
        let code = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        if code != 0 { errno = code }
        return code == 0 ? 0 : -1
      }
      switch result {
      case .success: return ChildProcessID(rawValue: pid)
      case .failure(.textFileBusy) where retries < 50:
        retries += 1
        ProcessEnvironment.sleep(.milliseconds(20))
      case .failure(let code): throw SystemError(operation: "spawn", path: executable, errno: code)
      }
    }
  }
}

/// A started child, by process id: reap it, kill it, or watch it with a pidfd.
public struct ChildProcessID: Hashable, Sendable {
  public let rawValue: Int32

  /// How it ended, or nil while it runs (waitpid with WNOHANG).
  public func exitIfEnded() throws(SystemError) -> ChildTermination? {
    var status: Int32 = 0
    let result = SystemCalls.perform(.waitpid) { _ in Int(waitpid(rawValue, &status, WNOHANG)) }
    switch result {
    case .success(0): return nil
    case .success: return ChildTermination(waitStatus: status)
    case .failure(let code): throw SystemError(operation: "waitpid", path: "pid \(rawValue)", errno: code)
    }
  }

  /// Waits for it to end.
  public func waitForExit() throws(SystemError) -> ChildTermination {
    var status: Int32 = 0
    let result = SystemCalls.perform(.waitpid) { _ in Int(waitpid(rawValue, &status, 0)) }
    if case .failure(let code) = result {
      throw SystemError(operation: "waitpid", path: "pid \(rawValue)", errno: code)
    }
    return ChildTermination(waitStatus: status)
  }

  /// SIGKILL to the process, or to its whole process group (started with `newProcessGroup`).
  public func kill(group: Bool = false) {
    let target = group ? -rawValue : rawValue
    _ = SystemCalls.check(.kill) { Glibc.kill(target, SIGKILL) }
  }

  /// pidfd_open(2) (Linux 5.3): a descriptor that polls readable when the process exits.
  public func openDescriptor() throws(SystemError) -> FileDescriptor {
    let result = SystemCalls.perform(.pidfdOpen) { _ in Int(clinux_pidfd_open(rawValue)) }
    switch result {
    case .success(let descriptor): return FileDescriptor(taking: Int32(descriptor), path: "pidfd \(rawValue)")
    case .failure(let code): throw SystemError(operation: "pidfd_open", path: "pid \(rawValue)", errno: code)
    }
  }
}

extension Spawn {
  /// Replaces this process with `program` (execv), keeping the environment: `arguments` is the whole
  /// argv, argv[0] included. Returns only when that failed, with why.
  public static func replaceCurrentProcess(with program: String, arguments: [String]) -> SystemError {
    var pointers = arguments.map { strdup($0) }
    pointers.append(nil)
    defer { pointers.forEach { free($0) } }
    let result = SystemCalls.perform(.exec, path: program) { _ in Int(execv(program, &pointers)) }
    if case .failure(let code) = result { return SystemError(operation: "execv", path: program, errno: code) }
    return SystemError(operation: "execv", path: program, errno: .invalidArgument)
  }
}
