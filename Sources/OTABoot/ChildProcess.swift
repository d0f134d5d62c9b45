// Runs one program to completion through OTASystem's one spawn: its standard input fed from bytes,
// its standard output and error collected, all through one poll loop so that neither side can block
// the other however much each writes. Every descriptor is close-on-exec, so a fork elsewhere in the
// process never inherits one (and never keeps the child's output open behind our back).
import OTASystem

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
    // Socket pairs rather than pipes: they are made close-on-exec atomically, and a send without
    // SIGPIPE cannot stop this process when the child exits without reading its input.
    let inputEnds = try input.map { _ throws(BootBackendError) in try channel(what) }
    let outputEnds = try channel(what)
    let errorEnds = try channel(what)

    var spawn = Spawn(executable, arguments: arguments, environment: environment)
    spawn.standardInput = inputEnds.map { .descriptor($0.child.rawValue) } ?? .null
    spawn.standardOutput = .descriptor(outputEnds.child.rawValue)
    spawn.standardError = .descriptor(errorEnds.child.rawValue)
    let child: ChildProcessID
    do {
      child = try spawn.start()
    } catch {
      throw BootBackendError("\(what): cannot start \(executable): \(error.errno)", errno: error.errno)
    }
    // The child has its copies; ours would keep its outputs open forever.
    for end in [inputEnds?.child, outputEnds.child, errorEnds.child] { try? end?.close() }

    var streams = Streams(input: inputEnds?.parent, output: outputEnds.parent, error: errorEnds.parent)
    defer { streams.closeAll() }
    var outcome = ChildOutcome(termination: .exited(0), standardOutput: [], standardError: [])
    let finished = try streams.exchange(input ?? [], into: &outcome, until: deadline, what)
    outcome.termination = finished ? try wait(child, until: deadline, what) : kill(child)
    return outcome
  }

  /// A connected pair of Unix stream sockets: one end for us, one for the child.
  private static func channel(_ what: String) throws(BootBackendError) -> (
    parent: FileDescriptor, child: FileDescriptor
  ) {
    do {
      let (parent, child) = try FileDescriptor.unixSocketPair(.stream)
      return (parent, child)
    } catch {
      throw BootBackendError("\(what): socketpair: \(error.errno)", errno: error.errno)
    }
  }

  /// Our ends of the child's standard streams; nil once closed.
  private struct Streams {
    var input: FileDescriptor?
    var output: FileDescriptor?
    var error: FileDescriptor?

    mutating func closeAll() {
      for stream in [input, output, error] { try? stream?.close() }
      (input, output, error) = (nil, nil, nil)
    }

    /// Feeds the input and collects both outputs until the child closes them. False at the deadline.
    mutating func exchange(
      _ bytes: [UInt8], into outcome: inout ChildOutcome, until deadline: ContinuousClock.Instant,
      _ what: String
    ) throws(BootBackendError) -> Bool {
      var written = 0
      if bytes.isEmpty { closeInput() }
      var chunk = [UInt8](repeating: 0, count: 65_536)
      while output != nil || error != nil {
        let remaining = deadline - ContinuousClock.now
        if remaining <= .zero { return false }
        let readable: Set<Int32>
        do {
          readable = try Poller.wait(
            for: [output, error].compactMap { $0?.rawValue }, writable: input.map { [$0.rawValue] } ?? [],
            timeout: min(remaining, .seconds(60)))
        } catch {
          throw BootBackendError("\(what): poll: \(error.errno)", errno: error.errno)
        }
        if let stream = input, readable.contains(stream.rawValue) {
          let sent = bytes[written...].withUnsafeBytes { raw in
            Result { () throws(SystemError) in try stream.send(raw, waiting: false) }
          }
          switch sent {
          case .success(let count?):
            written += count
            if written == bytes.count { closeInput() }
          case .success(nil):
            break
          case .failure:
            // The child will not read more (EPIPE, ECONNRESET): end its input.
            closeInput()
          }
        }
        if let stream = output, readable.contains(stream.rawValue) {
          if !Self.read(stream, into: &outcome.standardOutput, using: &chunk) {
            try? stream.close()
            output = nil
          }
        }
        if let stream = error, readable.contains(stream.rawValue) {
          if !Self.read(stream, into: &outcome.standardError, using: &chunk) {
            try? stream.close()
            error = nil
          }
        }
      }
      return true
    }

    private mutating func closeInput() {
      try? input?.close()
      input = nil
    }

    /// Appends what the stream has; false when it ended (or failed).
    private static func read(_ stream: FileDescriptor, into bytes: inout [UInt8], using chunk: inout [UInt8])
      -> Bool
    {
      let got = chunk.withUnsafeMutableBytes { raw in
        Result { () throws(SystemError) in try stream.readSome(into: raw) }
      }
      switch got {
      case .success(nil): return true
      case .success(let count?) where count > 0:
        bytes += chunk[..<count]
        return true
      case .success, .failure: return false
      }
    }
  }

  /// Reaps the child, polling until the deadline (a child may close its outputs and go on running).
  private static func wait(_ child: ChildProcessID, until deadline: ContinuousClock.Instant, _ what: String)
    throws(BootBackendError) -> ChildOutcome.Termination
  {
    while true {
      do {
        if let exit = try child.exitIfEnded() { return termination(exit) }
      } catch {
        throw BootBackendError("\(what): waitpid: \(error.errno)", errno: error.errno)
      }
      if ContinuousClock.now >= deadline { return kill(child) }
      ProcessEnvironment.sleep(.milliseconds(1))
    }
  }

  /// Kills a child that overran its deadline and reaps it.
  private static func kill(_ child: ChildProcessID) -> ChildOutcome.Termination {
    child.kill()
    _ = try? child.waitForExit()
    return .timedOut
  }

  private static func termination(_ exit: ChildTermination) -> ChildOutcome.Termination {
    switch exit {
    case .exited(let code): .exited(code)
    case .signalled(let signal): .signalled(signal)
    }
  }
}
