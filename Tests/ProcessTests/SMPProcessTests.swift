import Foundation
import Testing

/// otad's SMP server over UDP on loopback, driven by a real MCUmgr client: Intercreate's smpmgr
/// (PyPI, pinned by Scripts/setup.sh). smpmgr always uses UDP port 1337, so each test has a loopback
/// address of its own (127.0.0.x).
@Suite(.serialized) struct SMPProcessTests {
  static func sample(_ name: String) -> String { TrialBootProcessTests.sample(name) }

  /// A device whose slot A holds the sample firmware 1.0.0, serving SMP on `address`:1337.
  func device(_ address: String, extra: [String] = []) throws -> Daemon {
    let factory = try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v1.bin")))
    let daemon = try Daemon(capacity: "64KiB", firmware: [UInt8](factory))
    try daemon.start(
      extra: [
        "--smp-udp", "\(address):1337", "--health-check", TrialBootProcessTests.healthCheck, "--attempts",
        "2",
        "--factory-version", "1.0.0",
      ] + extra)
    return daemon
  }

  /// Waits until `done` holds for otad's status (the trial's restarts take a moment).
  func waitForStatus(_ daemon: Daemon, _ done: ([String: Any]) -> Bool) throws -> [String: Any] {
    let deadline = Date().addingTimeInterval(30)
    var status = try daemon.status()
    while !done(status), Date() < deadline {
      usleep(100_000)
      status = try daemon.status()
    }
    return status
  }

  @Test func smpmgrUpgradesToAConfirmedImage() throws {
    let smpmgr = try SMPManager.locate()
    let daemon = try device("127.0.0.21")
    let upgrade = try smpmgr.run([
      "--ip", "127.0.0.21", "upgrade", "--slot", "1", Self.sample("firmware-v2.bin"),
    ])
    #expect(upgrade.status == 0, "\(upgrade.output)\n\(daemon.log)")
    let status = try waitForStatus(daemon) { $0["confirmed"] as? String == "B" }
    #expect(status["running"] as? String == "B" && status["onTrial"] as? Bool == false, "\(daemon.log)")
    let states = try smpmgr.run(["--ip", "127.0.0.21", "image", "state-read"])
    let running = states.imageState(slot: 0)
    #expect(running.contains("version='2.0.0'"), "\(states.output)")
    #expect(running.contains("confirmed=True") && running.contains("active=True"), "\(states.output)")
    #expect(states.imageState(slot: 1).contains("version='1.0.0'"), "\(states.output)")
    #expect(daemon.log.contains("restarting on an SMP reset"))
    #expect(daemon.stop() == 0)
  }

  @Test func aFirmwareThatFailsItsSelfTestRollsBackAndStateReadSaysSo() throws {
    let smpmgr = try SMPManager.locate()
    let daemon = try device("127.0.0.22")
    let upgrade = try smpmgr.run([
      "--ip", "127.0.0.22", "upgrade", "--slot", "1", Self.sample("firmware-v3.bin"),
    ])
    #expect(upgrade.status == 0, "\(upgrade.output)\n\(daemon.log)")
    let status = try waitForStatus(daemon) {
      ($0["lastOutcome"] as? [String: Any])?["result"] as? String == "rolled back"
    }
    #expect(status["running"] as? String == "A" && status["confirmed"] as? String == "A", "\(daemon.log)")
    let states = try smpmgr.run(["--ip", "127.0.0.22", "image", "state-read"])
    #expect(states.imageState(slot: 0).contains("version='1.0.0'"), "\(states.output)")
    #expect(states.imageState(slot: 0).contains("confirmed=True"), "\(states.output)")
    let failed = states.imageState(slot: 1)
    #expect(failed.contains("version='3.0.0'") && failed.contains("bootable=False"), "\(states.output)")
    #expect(failed.contains("pending=False") && failed.contains("active=False"), "\(states.output)")
    #expect(daemon.stop() == 0)
  }

  @Test func echoParametersAndInfoAreAnswered() throws {
    let smpmgr = try SMPManager.locate()
    let daemon = try device("127.0.0.23")
    let echo = try smpmgr.run(["--ip", "127.0.0.23", "os", "echo", "hello otad"])
    #expect(echo.status == 0 && echo.output.contains("r='hello otad'"), "\(echo.output)")
    // smpmgr has no command for these: smpclient (its library, in the same venv) asks directly.
    let script = """
      import asyncio
      from smpclient import SMPClient
      from smpclient.transport.udp import SMPUDPTransport
      from smpclient.requests.os_management import MCUMgrParametersRead, OSApplicationInfoRead, BootloaderInformationRead
      async def main():
          async with SMPClient(SMPUDPTransport(), "127.0.0.23") as client:
              print(await client.request(MCUMgrParametersRead()))
              print(await client.request(OSApplicationInfoRead(format="so")))
              print(await client.request(BootloaderInformationRead()))
      asyncio.run(main())
      # smpclient's model takes no "mode" answer: bootloader info's mode query as raw bytes.
      import socket
      s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
      s.settimeout(5)
      s.sendto(bytes.fromhex("0800000c00000108a1657175657279646d6f6465"), ("127.0.0.23", 1337))
      print("mode answer", s.recv(2048).hex())
      """
    let asked = try smpmgr.python(script)
    #expect(asked.status == 0, "\(asked.output)")
    #expect(asked.output.contains("buf_size=2048") && asked.output.contains("buf_count=1"), "\(asked.output)")
    #expect(asked.output.contains("output='Linux otad'"), "\(asked.output)")
    #expect(asked.output.contains("bootloader='MCUboot'"), "\(asked.output)")
    // {"mode": 3, "no-downgrade": true}: swap using move, downgrades refused.
    let mode = "0900001500000108" + "a2646d6f6465036c6e6f2d646f776e6772616465f5"
    #expect(asked.output.contains("mode answer \(mode)"), "\(asked.output)")
    #expect(daemon.stop() == 0)
  }

  @Test func anUnsignedImageIsRefusedWithTheImageGroupsCode() throws {
    let smpmgr = try SMPManager.locate()
    let daemon = try device("127.0.0.24", extra: ["--trusted-key", Self.sample("keys/test-ed25519.pub.pem")])
    let upload = try smpmgr.run([
      "--ip", "127.0.0.24", "image", "upload", Self.sample("mcuboot-unsigned-4099B.bin"),
    ])
    #expect(upload.status != 0, "\(upload.output)")
    #expect(upload.output.contains("rc=<IMG_MGMT_ERR.INVALID_TLV: 5>"), "\(upload.output)")
    let states = try smpmgr.run(["--ip", "127.0.0.24", "image", "state-read"])
    #expect(!states.output.contains("slot=1"), "nothing to test in slot 1: \(states.output)")
    let status = try daemon.status()
    #expect(status["running"] as? String == "A" && status["confirmed"] as? String == "A")
    #expect(daemon.stop() == 0)
  }
}

/// smpmgr: $BLUEOTA_SMPMGR, then `<repo>/.build-smpmgr/bin/smpmgr` (Scripts/setup.sh), then PATH.
struct SMPManager {
  let executable: URL

  static func locate() throws -> SMPManager {
    let environment = ProcessInfo.processInfo.environment
    var candidates: [String] = []
    if let configured = environment["BLUEOTA_SMPMGR"], !configured.isEmpty { candidates.append(configured) }
    candidates.append(TrialBootProcessTests.root.appendingPathComponent(".build-smpmgr/bin/smpmgr").path)
    candidates += (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/smpmgr" }
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
      throw DaemonError(
        "smpmgr not found: run Scripts/setup.sh (blueota_install_smpmgr) or set BLUEOTA_SMPMGR")
    }
    return SMPManager(executable: URL(fileURLWithPath: found))
  }

  func run(_ arguments: [String]) throws -> SMPResult {
    try launch(executable, arguments)
  }

  /// A Python script run by the venv's own Python (smpclient is there).
  func python(_ script: String) throws -> SMPResult {
    try launch(executable.deletingLastPathComponent().appendingPathComponent("python"), ["-c", script])
  }

  private func launch(_ program: URL, _ arguments: [String]) throws -> SMPResult {
    let process = Process()
    process.executableURL = program
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["COLUMNS"] = "200"
    environment["NO_COLOR"] = "1"
    process.environment = environment
    let output = FileManager.default.temporaryDirectory.appendingPathComponent(
      "smpmgr-\(UUID().uuidString).out")
    FileManager.default.createFile(atPath: output.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: output) }
    let handle = try FileHandle(forWritingTo: output)
    process.standardOutput = handle
    process.standardError = handle
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(90)
    while process.isRunning, Date() < deadline { usleep(20_000) }
    if process.isRunning {
      process.terminate()
      Issue.record("\(program.lastPathComponent) \(arguments.joined(separator: " ")) ran over 90 s")
    }
    process.waitUntilExit()
    try handle.close()
    return SMPResult(
      status: process.terminationStatus, output: (try? String(contentsOf: output, encoding: .utf8)) ?? "")
  }
}

struct SMPResult {
  var status: Int32
  var output: String

  /// The `ImageState(...)` block state-read printed for `slot`, flattened to one line.
  func imageState(slot: Int) -> String {
    let flat = output.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: " ", with: "")
    let blocks = flat.components(separatedBy: "ImageState(").dropFirst()
    return blocks.first { $0.hasPrefix("slot=\(slot),") } ?? ""
  }
}
