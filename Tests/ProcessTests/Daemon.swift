import Foundation
import OTAReport
import OTATestSupport
import Testing

/// An otad in a temporary folder of its own: file slots, a state directory, a socket.
final class Daemon {
  let folder: URL
  let capacity: String
  private(set) var process: Process?
  private let logFile: URL

  var socket: String { folder.appendingPathComponent("device.sock").path }
  var slotA: URL { folder.appendingPathComponent("slot-a.img") }
  let slotB: URL
  let stateDirectory: URL

  /// Where the device keeps its things: what every otad command that opens its storage takes.
  var storageArguments: [String] {
    [
      "--slot-a", slotA.path, "--slot-b", slotB.path, "--capacity", capacity, "--state-dir",
      stateDirectory.path,
    ]
  }

  /// `otad run`'s: the storage and the socket it serves on.
  var baseArguments: [String] { storageArguments + ["--socket", socket] }

  /// Slot A starts out holding `firmware`, as a device's running image would (nil: no slot A file).
  /// Slot B and the state directory may live elsewhere (a small file system).
  init(capacity: String = "2MiB", firmware: [UInt8]?, slotB: URL? = nil, stateDirectory: URL? = nil) throws {
    folder = try TemporaryDirectory(label: "otad-test").url
    if let firmware { try Data(firmware).write(to: folder.appendingPathComponent("slot-a.img")) }
    self.capacity = capacity
    self.slotB = slotB ?? folder.appendingPathComponent("slot-b.img")
    self.stateDirectory = stateDirectory ?? folder.appendingPathComponent("state")
    logFile = folder.appendingPathComponent("otad.log")
  }

  deinit {
    if let process, process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
    try? FileManager.default.removeItem(at: folder)
  }

  /// Starts otad and waits until its socket is there (and its fault control's, with faults allowed).
  /// `fileSizeLimit` (in /bin/sh's `ulimit -f` blocks) runs it under RLIMIT_FSIZE with SIGXFSZ
  /// ignored: writes past the limit fail with EFBIG.
  func start(extra: [String] = [], fileSizeLimit: Int? = nil) throws {
    let process = Process()
    let arguments = ["run"] + baseArguments + ["--log-level", "debug"] + extra
    if let fileSizeLimit {
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      process.arguments =
        ["-c", "trap '' XFSZ; ulimit -f \(fileSizeLimit); exec \"$0\" \"$@\"", Binaries.url("otad").path]
        + arguments
    } else {
      process.executableURL = Binaries.url("otad")
      process.arguments = arguments
    }
    if !FileManager.default.fileExists(atPath: logFile.path) {
      FileManager.default.createFile(atPath: logFile.path, contents: nil)
    }
    let log = try FileHandle(forWritingTo: logFile)
    log.seekToEndOfFile()
    process.standardOutput = log
    process.standardError = log
    let faultControl = stateDirectory.appendingPathComponent("faults.sock").path
    for path in [socket, faultControl] { try? FileManager.default.removeItem(atPath: path) }
    try process.run()
    self.process = process
    // With faults allowed, otad opens its fault control after the link's socket: waiting for both
    // means the faults file has been read and what otad said of it is in the log.
    let awaited = extra.contains("--allow-faults") ? [socket, faultControl] : [socket]
    let deadline = Date().addingTimeInterval(20)
    while !awaited.allSatisfy(FileManager.default.fileExists(atPath:)), Date() < deadline, process.isRunning {
      usleep(20_000)
    }
    guard awaited.allSatisfy(FileManager.default.fileExists(atPath:)) else {
      throw DaemonError("otad did not start (waited for \(awaited)): \(self.log)")
    }
  }

  /// SIGKILL: the process gets no chance to tidy anything.
  func killHard() {
    guard let process else { return }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    self.process = nil
  }

  /// SIGTERM, and the exit status.
  func stop() -> Int32? {
    guard let process else { return nil }
    process.terminate()
    process.waitUntilExit()
    self.process = nil
    return process.terminationStatus
  }

  var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

  /// `otad status --json`, read from the state directory.
  /// otad's status once `done` holds for it, or the last one read after 30 s (a trial's restarts
  /// take a moment).
  func waitForStatus(_ done: (DeviceStatusReport) -> Bool) throws -> DeviceStatusReport {
    let deadline = Date().addingTimeInterval(30)
    var status = try status()
    while !done(status), Date() < deadline {
      usleep(100_000)
      status = try self.status()
    }
    return status
  }

  /// A test device key from Images/keys (`name`, without `.pem`) copied into the daemon's folder
  /// with `mode` (otad refuses a private key others may read); returns its path, for
  /// `--decryption-key`.
  func deviceKey(_ name: String, mode: Int = 0o600) throws -> String {
    let path = folder.appendingPathComponent("\(name).pem").path
    try Data(RepositoryRoot.bytes("Images/keys/\(name).pem")).write(to: URL(fileURLWithPath: path))
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    return path
  }

  /// `otad status --json`, decoded as the report docs/OTAD.md documents (OTAReport's type).
  func status() throws -> DeviceStatusReport {
    let result = try runTool("otad", ["status"] + storageArguments + ["--json"])
    guard result.status == 0 else { throw DaemonError("otad status failed: \(result.errors)") }
    do {
      return try JSONDecoder().decode(DeviceStatusReport.self, from: Data(result.output.utf8))
    } catch {
      throw DaemonError("otad status --json is no DeviceStatusReport (\(error)): \(result.output)")
    }
  }

  func slotBytes(_ url: URL, count: Int) -> [UInt8] {
    Array((try? Data(contentsOf: url))?.prefix(count) ?? Data())
  }
}

struct DaemonError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Deterministic bytes for images and firmware.
func testBytes(_ count: Int, seed: UInt64) -> [UInt8] {
  var state = seed
  return (0..<count).map { _ in
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return UInt8(truncatingIfNeeded: state >> 33)
  }
}

/// A bare Unix socket client, for sending what no real central would.
final class RawSocket {
  private let descriptor: Int32

  init(path: String) throws {
    descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: Array(path.utf8) + [0])
    }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard connected == 0 else { throw DaemonError("cannot connect to \(path)") }
  }

  func send(_ bytes: [UInt8]) {
    _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    usleep(50_000)
  }

  func close() { _ = Glibc.close(descriptor) }
}
