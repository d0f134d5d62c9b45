import OTASystem

/// Runs the bootloader's command-line tools (`fw_printenv`, `fw_setenv`, `grub-editenv`), found by name
/// in a search path given at init, so that tests put a directory of fake tools first instead of
/// changing the process's environment. The tool sees the same search path as its PATH.
public struct ToolRunner: Sendable {
  /// Directories searched in order, separated by ":" (empty entries are skipped, never ".").
  public let searchPath: String
  /// How long one run may take before the tool is killed and the run fails.
  public let timeout: Duration

  /// The process's PATH, or the usual system directories when it has none.
  public static var processSearchPath: String {
    ProcessEnvironment.value("PATH")
      ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
  }

  public init(searchPath: String = ToolRunner.processSearchPath, timeout: Duration = .seconds(30)) {
    self.searchPath = searchPath
    self.timeout = timeout
  }

  /// The full path of `tool`: a name with a "/" is taken as it is, others are looked up in `searchPath`.
  public func locate(_ tool: String) throws(BootBackendError) -> String {
    if tool.contains("/") { return tool }
    for directory in searchPath.split(separator: ":") where !directory.isEmpty {
      let candidate = directory.hasSuffix("/") ? "\(directory)\(tool)" : "\(directory)/\(tool)"
      if FileSystem.isExecutableFile(candidate) { return candidate }
    }
    throw BootBackendError("\(tool): not found in \(searchPath)")
  }

  /// Runs `tool` with `arguments`, writing `input` to its standard input (nil: /dev/null), and returns
  /// what it wrote to standard output. A non-zero exit, a signal or the timeout is a
  /// `BootBackendError` naming the command, the status and the tool's standard error.
  @discardableResult
  public func run(_ tool: String, _ arguments: [String] = [], input: [UInt8]? = nil) throws(BootBackendError)
    -> [UInt8]
  {
    let command = ([tool] + arguments).joined(separator: " ")
    let executable = try locate(tool)
    let outcome = try ChildProcess.run(
      executable: executable, arguments: arguments, environment: environment(), input: input,
      timeout: timeout,
      what: command)
    let problem: String
    switch outcome.termination {
    case .exited(0): return outcome.standardOutput
    case .exited(let status): problem = "exited with status \(status)"
    case .signalled(let signal): problem = "was killed by signal \(signal)"
    case .timedOut: problem = "did not finish within \(timeout) and was killed"
    }
    let message = String(decoding: outcome.standardError, as: UTF8.self).trimmingWhitespace()
    throw BootBackendError("`\(command)` \(problem)" + (message.isEmpty ? "" : ": \(message)"))
  }

  /// `run` with the output as text (the tools here print variable listings).
  @discardableResult
  public func runText(_ tool: String, _ arguments: [String] = [], input: String? = nil)
    throws(BootBackendError)
    -> String
  {
    String(decoding: try run(tool, arguments, input: input.map { Array($0.utf8) }), as: UTF8.self)
  }

  /// The process's environment with PATH replaced by `searchPath`.
  private func environment() -> [String] {
    var entries = ProcessEnvironment.entries.filter { !$0.hasPrefix("PATH=") }
    entries.append("PATH=\(searchPath)")
    return entries
  }
}

extension String {
  /// Without leading and trailing spaces, tabs and newlines.
  func trimmingWhitespace() -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
    guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) })
    else {
      return ""
    }
    return String(self[first...last])
  }
}
