// Runs one program to completion with posix_spawn: its standard input fed from bytes, its standard
// output and error collected, all through one poll loop so that neither side can block the other
// however much each writes. Every descriptor is created close-on-exec, so a fork elsewhere in the
// process never inherits one (and never keeps the child's output open behind our back).
import Glibc

/// How a child process ended, and what it wrote.
struct ChildOutcome: Sendable {
  enum Termination: Equatable, Sendable {
    case exited(Int32)
    case signalled(Int32)
    /// Still running at the deadline; it was killed with SIGKILL.
    case timedOut
  }

  var termination: Termination
  var standardOutput: [UInt8]
  var standardError: [UInt8]
}

enum ChildProcess {
  /// Runs `executable` (a full path) with `arguments` (argv[1...]) and `environment`, writing `input`
  /// to its standard input (nil: /dev/null) and waiting at most `timeout` for it to finish.
  /// Throws only when the process cannot be started or a system call fails; `what` names the command
  /// in those errors.
  static func run(
    executable: String, arguments: [String], environment: [String], input: [UInt8]?,
    timeout: Duration, what: String
  ) throws(BootBackendError) -> ChildOutcome {
    let deadline = ContinuousClock.now + timeout
    var descriptors = Descriptors()
    defer { descriptors.closeAll() }

    // Socket pairs rather than pipes: they can be made close-on-exec atomically (`pipe2` is not
    // imported), and `send` with MSG_NOSIGNAL cannot raise SIGPIPE in this process when the child
    // exits without reading its input.
    if input != nil { (descriptors.inputParent, descriptors.inputChild) = try channel(what) }
    (descriptors.outputParent, descriptors.outputChild) = try channel(what)
    (descriptors.errorParent, descriptors.errorChild) = try channel(what)

    let pid = try spawn(executable, arguments, environment, descriptors, what)
    descriptors.closeChildEnds()

    var outcome = ChildOutcome(termination: .exited(0), standardOutput: [], standardError: [])
    let finished = try exchange(&descriptors, input: input ?? [], outcome: &outcome, until: deadline, what)
    outcome.termination = finished ? try wait(pid, until: deadline, what) : kill(pid)
    return outcome
  }

  /// The descriptors of one run; -1 when closed.
  private struct Descriptors {
    var inputParent: Int32 = -1
    var inputChild: Int32 = -1
    var outputParent: Int32 = -1
    var outputChild: Int32 = -1
    var errorParent: Int32 = -1
    var errorChild: Int32 = -1

    mutating func closeChildEnds() {
      Self.close(&inputChild)
      Self.close(&outputChild)
      Self.close(&errorChild)
    }

    mutating func closeAll() {
      closeChildEnds()
      Self.close(&inputParent)
      Self.close(&outputParent)
      Self.close(&errorParent)
    }

    static func close(_ fd: inout Int32) {
      if fd >= 0 { _ = Glibc.close(fd) }
      fd = -1
    }
  }

  /// A connected pair of Unix stream sockets, both close-on-exec: one end for us, one for the child.
  private static func channel(_ what: String) throws(BootBackendError) -> (parent: Int32, child: Int32) {
    var ends: [Int32] = [-1, -1]
    if socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) != 0 {
      throw BootBackendError("\(what): socketpair: \(String(cString: strerror(errno)))")
    }
    return (ends[0], ends[1])
  }

  private static func spawn(
    _ executable: String, _ arguments: [String], _ environment: [String], _ descriptors: Descriptors,
    _ what: String
  ) throws(BootBackendError) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if descriptors.inputChild >= 0 {
      posix_spawn_file_actions_adddup2(&actions, descriptors.inputChild, 0)
    } else {
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    posix_spawn_file_actions_adddup2(&actions, descriptors.outputChild, 1)
    posix_spawn_file_actions_adddup2(&actions, descriptors.errorChild, 2)

    // The child starts with default signal dispositions and nothing blocked, whatever this process
    // ignores or masks (a daemon often ignores SIGPIPE; the tool should not inherit that).
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var all = sigset_t()
    var none = sigset_t()
    sigfillset(&all)
    sigemptyset(&none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup($0) } + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    // ETXTBSY: somebody has the program open for writing. Often that is only for an instant (a
    // package upgrade replacing it, or a child forked elsewhere in this process inheriting a
    // descriptor of a file being written, before its exec closes it), so try again for a while.
    var pid: pid_t = 0
    var status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
    var retries = 0
    while status == ETXTBSY && retries < 50 {
      retries += 1
      var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
      nanosleep(&pause, nil)
      status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
    }
    if status != 0 {
      throw BootBackendError("\(what): cannot start \(executable): \(String(cString: strerror(status)))")
    }
    return pid
  }

  /// Feeds the input and collects both outputs until the child closes them. False at the deadline.
  private static func exchange(
    _ descriptors: inout Descriptors, input: [UInt8], outcome: inout ChildOutcome,
    until deadline: ContinuousClock.Instant,
    _ what: String
  ) throws(BootBackendError) -> Bool {
    var written = 0
    if descriptors.inputParent >= 0 && input.isEmpty { Descriptors.close(&descriptors.inputParent) }
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while descriptors.outputParent >= 0 || descriptors.errorParent >= 0 {
      let remaining = deadline - ContinuousClock.now
      if remaining <= .zero { return false }
      let milliseconds = Int32(min(remaining.components.seconds * 1000 + 1, 60_000))
      var polled = [
        pollfd(fd: descriptors.outputParent, events: Int16(POLLIN), revents: 0),
        pollfd(fd: descriptors.errorParent, events: Int16(POLLIN), revents: 0),
        pollfd(fd: descriptors.inputParent, events: Int16(POLLOUT), revents: 0),
      ]
      let ready = poll(&polled, nfds_t(polled.count), milliseconds)
      if ready < 0 {
        if errno == EINTR { continue }
        throw BootBackendError("\(what): poll: \(String(cString: strerror(errno)))")
      }
      if polled[2].revents != 0 {
        let sent = input.withUnsafeBytes {
          send(
            descriptors.inputParent, $0.baseAddress.map { $0 + written }, $0.count - written,
            Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        if sent > 0 { written += sent }
        // Everything sent, or the child will not read more (EPIPE, ECONNRESET): end its input.
        if written == input.count || (sent < 0 && errno != EINTR && errno != EAGAIN) {
          Descriptors.close(&descriptors.inputParent)
        }
      }
      for (index, fd) in [descriptors.outputParent, descriptors.errorParent].enumerated()
      where polled[index].revents != 0 {
        let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if got > 0 {
          if index == 0 {
            outcome.standardOutput += chunk[..<got]
          } else {
            outcome.standardError += chunk[..<got]
          }
        } else if got == 0 || (errno != EINTR && errno != EAGAIN) {
          if index == 0 {
            Descriptors.close(&descriptors.outputParent)
          } else {
            Descriptors.close(&descriptors.errorParent)
          }
        }
      }
    }
    return true
  }

  /// Reaps the child, polling until the deadline (a child may close its outputs and go on running).
  private static func wait(_ pid: pid_t, until deadline: ContinuousClock.Instant, _ what: String)
    throws(BootBackendError)
    -> ChildOutcome.Termination
  {
    var status: Int32 = 0
    while true {
      let reaped = waitpid(pid, &status, WNOHANG)
      if reaped == pid { return termination(status) }
      if reaped < 0 && errno != EINTR {
        throw BootBackendError("\(what): waitpid: \(String(cString: strerror(errno)))")
      }
      if ContinuousClock.now >= deadline { return kill(pid) }
      var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
      nanosleep(&pause, nil)
    }
  }

  /// Kills a child that overran its deadline and reaps it.
  private static func kill(_ pid: pid_t) -> ChildOutcome.Termination {
    _ = Glibc.kill(pid, SIGKILL)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return .timedOut
  }

  /// `WIFEXITED`/`WEXITSTATUS`/`WTERMSIG`, which are macros Swift does not import.
  private static func termination(_ status: Int32) -> ChildOutcome.Termination {
    let signal = status & 0x7f
    return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
  }
}
