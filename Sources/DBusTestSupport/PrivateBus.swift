import Foundation

/// A dbus-daemon of one test's own, on a socket in /tmp: started with `--print-address`, killed by
/// `stop()` (and by deinit, should a test throw first). For the D-Bus and BlueZ tests only.
public final class PrivateBus {
  public static let daemonPath = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon", "/usr/local/bin/dbus-daemon"]
    .first { FileManager.default.isExecutableFile(atPath: $0) }
  public static var isAvailable: Bool { daemonPath != nil }

  public struct Unavailable: Error {}

  public let address: String
  private let process: Process

  public init() throws {
    guard let daemonPath = Self.daemonPath else { throw Unavailable() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: daemonPath)
    process.arguments = ["--session", "--nofork", "--print-address=1", "--address=unix:tmpdir=/tmp"]
    let output = Pipe()
    process.standardOutput = output
    // It warns that it cannot raise the descriptor limit when not privileged enough: not our business.
    process.standardError = FileHandle.nullDevice
    try process.run()
    var printed = Data()
    while !printed.contains(UInt8(ascii: "\n")) {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      printed += chunk
    }
    let address = String(decoding: printed.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    guard !address.isEmpty else {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      throw Unavailable()
    }
    self.process = process
    self.address = address
  }

  deinit { stop() }

  /// SIGSTOP: the bus stops reading (and answering) until `resume()`.
  public func pause() { kill(process.processIdentifier, SIGSTOP) }

  /// SIGCONT after `pause()`.
  public func resume() { kill(process.processIdentifier, SIGCONT) }

  /// SIGKILL: the daemon may inherit a signal mask in which SIGTERM is blocked.
  public func stop() {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}
