import Foundation
import OTATestSupport
import Synchronization
import Testing

/// Where `swift build` put otad and otactl: next to the test bundle, or $BLUEOTA_BIN.
enum Binaries {
  static let directory: URL = {
    if let path = ProcessInfo.processInfo.environment["BLUEOTA_BIN"] { return URL(fileURLWithPath: path) }
    var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
    let root = RepositoryRoot.url
    candidates.append(root.appendingPathComponent(".build/debug"))
    return candidates.first {
      FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("otad").path)
    }
      ?? candidates[0]
  }()

  static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }
}

/// What a finished command printed and how it ended.
struct CommandResult {
  var status: Int32
  var output: String
  var errors: String

  /// The JSON lines it printed.
  var jsonLines: [[String: Any]] {
    output.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }
}

/// Runs a program to its end, with a time limit.
func runTool(_ name: String, _ arguments: [String], timeout: TimeInterval = 120) throws -> CommandResult {
  let process = Process()
  process.executableURL = Binaries.url(name)
  process.arguments = arguments
  let output = Pipe()
  let errors = Pipe()
  process.standardOutput = output
  process.standardError = errors
  process.standardInput = FileHandle.nullDevice
  try process.run()
  // Drain both pipes while the program runs, so that it never blocks on a full pipe.
  let outputData = Locked(Data())
  let errorData = Locked(Data())
  let group = DispatchGroup()
  for (pipe, sink) in [(output, outputData), (errors, errorData)] {
    group.enter()
    DispatchQueue.global().async {
      sink.set(pipe.fileHandleForReading.readDataToEndOfFile())
      group.leave()
    }
  }
  let deadline = Date().addingTimeInterval(timeout)
  while process.isRunning, Date() < deadline { usleep(20_000) }
  if process.isRunning {
    process.terminate()
    Issue.record("\(name) \(arguments.joined(separator: " ")) ran over \(timeout) s")
  }
  process.waitUntilExit()
  group.wait()
  return CommandResult(
    status: process.terminationStatus, output: String(decoding: outputData.get(), as: UTF8.self),
    errors: String(decoding: errorData.get(), as: UTF8.self))
}

/// A value shared with a reading thread.
final class Locked<Value: Sendable>: Sendable {
  private let value: Mutex<Value>
  init(_ value: Value) { self.value = Mutex(value) }
  func get() -> Value { value.withLock { $0 } }
  func set(_ new: Value) { value.withLock { $0 = new } }
}
