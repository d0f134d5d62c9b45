import Foundation
import Glibc
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

  @Test func smpmgrUpgradesToAConfirmedImage() throws {
    // [S-CMD-2] [S-CMD-6] [S-STATE-1]
    let smpmgr = try SMPManager.locate()
    let daemon = try device("127.0.0.21")
    let upgrade = try smpmgr.run([
      "--ip", "127.0.0.21", "upgrade", "--slot", "1", Self.sample("firmware-v2.bin"),
    ])
    #expect(upgrade.status == 0, "\(upgrade.output)\n\(daemon.log)")
    let status = try daemon.waitForStatus { $0.confirmed == "B" }
    #expect(status.running == "B" && status.onTrial == false, "\(daemon.log)")
    let states = try smpmgr.run(["--ip", "127.0.0.21", "image", "state-read"])
    let running = states.imageState(slot: 0)
    #expect(running.contains("version='2.0.0'"), "\(states.output)")
    #expect(running.contains("confirmed=True") && running.contains("active=True"), "\(states.output)")
    #expect(states.imageState(slot: 1).contains("version='1.0.0'"), "\(states.output)")
    #expect(daemon.log.contains("restarting on an SMP reset"))
    #expect(daemon.stop() == 0)
  }

  @Test func aFirmwareThatFailsItsSelfTestRollsBackAndStateReadSaysSo() throws {
    // [S-CMD-6] [S-STATE-1]
    let smpmgr = try SMPManager.locate()
    let daemon = try device("127.0.0.22")
    let upgrade = try smpmgr.run([
      "--ip", "127.0.0.22", "upgrade", "--slot", "1", Self.sample("firmware-v3.bin"),
    ])
    #expect(upgrade.status == 0, "\(upgrade.output)\n\(daemon.log)")
    let status = try daemon.waitForStatus {
      $0.lastOutcome.result == "rolled back"
    }
    #expect(status.running == "A" && status.confirmed == "A", "\(daemon.log)")
    let states = try smpmgr.run(["--ip", "127.0.0.22", "image", "state-read"])
    #expect(states.imageState(slot: 0).contains("version='1.0.0'"), "\(states.output)")
    #expect(states.imageState(slot: 0).contains("confirmed=True"), "\(states.output)")
    let failed = states.imageState(slot: 1)
    #expect(failed.contains("version='3.0.0'") && failed.contains("bootable=False"), "\(states.output)")
    #expect(failed.contains("pending=False") && failed.contains("active=False"), "\(states.output)")
    #expect(daemon.stop() == 0)
  }

  @Test func echoParametersAndInfoAreAnswered() throws {
    // [S-CMD-1] [S-CMD-3] [S-CMD-4] [S-CMD-5]
    let smpmgr = try SMPManager.locate()
    let daemon = try device("127.0.0.23")
    let echo = try smpmgr.run(["--ip", "127.0.0.23", "os", "echo", "hello otad"])
    #expect(echo.status == 0 && echo.output.contains("r='hello otad'"), "\(echo.output)")
    // smpmgr has no command for these: smpclient (its library, in the same venv) asks directly.
    let script = """
      asyncio = __import__("asyncio")
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
      socket = __import__("socket")
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

  /// smpmgr uploads imgtool's encrypted sample unchanged; otad holds its key, checks it over the
  /// plaintext, decrypts it in place, and the test, reset and health check end on it confirmed.
  @Test func smpmgrUpgradesToAnEncryptedImage() throws {
    // [SEC-ENC-1]
    let smpmgr = try SMPManager.locate()
    let factory = try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v1.bin")))
    let daemon = try Daemon(capacity: "256KiB", firmware: [UInt8](factory))
    let key = try daemon.deviceKey("test-device-x25519")
    try daemon.start(extra: [
      "--smp-udp", "127.0.0.26:1337", "--health-check", "true", "--factory-version", "1.0.0",
      "--decryption-key", key,
    ])
    let upgrade = try smpmgr.run([
      "--ip", "127.0.0.26", "upgrade", "--slot", "1", Self.sample("mcuboot-enc-x25519-100KiB.bin"),
    ])
    #expect(upgrade.status == 0, "\(upgrade.output)\n\(daemon.log)")
    let status = try daemon.waitForStatus { $0.confirmed == "B" }
    #expect(status.running == "B", "\(daemon.log)")
    let states = try smpmgr.run(["--ip", "127.0.0.26", "image", "state-read"])
    #expect(states.imageState(slot: 0).contains("version='2.1.0'"), "\(states.output)")
    let payload = try Data(contentsOf: URL(fileURLWithPath: Self.sample("raw-100KiB.bin")))
    #expect(
      daemon.slotBytes(daemon.slotB, count: 0x200 + payload.count).dropFirst(0x200).elementsEqual(payload))
    #expect(daemon.stop() == 0)
  }

  @Test func anUnsignedImageIsRefusedWithTheImageGroupsCode() throws {
    // [S-UP-9] [SEC-SMP-1] [SEC-SMP-2]
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
    #expect(status.running == "A" && status.confirmed == "A")
    #expect(daemon.stop() == 0)
  }
}

extension SMPProcessTests {
  /// smpclient uploads part of `image` and stops (the client killed), or sends the first chunk again
  /// and prints the offset the device answers.
  static func partialUpload(_ image: String, address: String, stopAfter: Int?) -> String {
    """
    asyncio, hashlib = __import__("asyncio"), __import__("hashlib")
    from smpclient import SMPClient
    from smpclient.transport.udp import SMPUDPTransport
    from smpclient.requests.image_management import ImageUploadWrite
    image = open("\(image)", "rb").read()
    async def main():
        async with SMPClient(SMPUDPTransport(), "\(address)") as client:
            if \(stopAfter.map(String.init) ?? "None") is None:
                r = await client.request(ImageUploadWrite(
                    off=0, data=image[:512], image=1, len=len(image), sha=hashlib.sha256(image).digest()))
                print("resumed at", r.off)
                return
            async for off in client.upload(image, 1):
                if off > \(stopAfter ?? 0):
                    print("stopped at", off)
                    return
    asyncio.run(main())
    """
  }

  static func number(after prefix: String, in output: String) -> Int? {
    guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
    return Int(line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces))
  }

  @Test func anUploadResumesAfterTheClientOrOtadWasKilled() throws {
    // [S-UP-6]
    let smpmgr = try SMPManager.locate()
    let image = Self.sample("firmware-v2.bin")
    let daemon = try device("127.0.0.25", extra: ["--window", "4KiB"])
    // The client stops past 20000 bytes; a new one asks again from 0 with the same sha.
    let first = try smpmgr.python(Self.partialUpload(image, address: "127.0.0.25", stopAfter: 20000))
    let stopped = try #require(Self.number(after: "stopped at", in: first.output), "\(first.output)")
    let again = try smpmgr.python(Self.partialUpload(image, address: "127.0.0.25", stopAfter: nil))
    let resumed = try #require(Self.number(after: "resumed at", in: again.output), "\(again.output)")
    #expect(resumed > 16000 && resumed <= stopped, "committed windows are kept: \(resumed) of \(stopped)")

    // otad killed -9 and started again: the journal's committed offset is where the upload goes on.
    daemon.killHard()
    try daemon.start(extra: [
      "--smp-udp", "127.0.0.25:1337", "--health-check", TrialBootProcessTests.healthCheck, "--attempts", "2",
      "--factory-version", "1.0.0", "--window", "4KiB",
    ])
    let afterKill = try smpmgr.python(Self.partialUpload(image, address: "127.0.0.25", stopAfter: nil))
    let restarted = try #require(
      Self.number(after: "resumed at", in: afterKill.output), "\(afterKill.output)")
    #expect(restarted > 16000 && restarted <= stopped, "\(restarted) of \(stopped)\n\(daemon.log)")

    // And smpmgr finishes it: from there to a confirmed image.
    let upgrade = try smpmgr.run(["--ip", "127.0.0.25", "upgrade", "--slot", "1", image])
    #expect(upgrade.status == 0, "\(upgrade.output)\n\(daemon.log)")
    let status = try daemon.waitForStatus { $0.confirmed == "B" }
    #expect(status.running == "B" && status.onTrial == false, "\(daemon.log)")
    #expect(daemon.stop() == 0)
  }

  @Test func malformedDatagramsAreAnsweredOrDroppedAndOtadKeepsServing() throws {
    // [S-ERR-4] [S-ERR-7] [SEC-SMP-4]
    let daemon = try device("127.0.0.26")
    let client = try UDPClient(address: "127.0.0.26")
    let other = try UDPClient(address: "127.0.0.26")
    // A header whose length lies (10 announced, 1 sent): rc 3.
    #expect(try client.ask("0200000a00000100a0") == "0300000500000100a162726303")
    // Not CBOR: rc 3. A map with the wrong type: rc 3. An unknown group: rc 8. SMP version 3: rc 13.
    #expect(try client.ask("02000002000001 00ffff") == "0300000500000100a162726303")
    #expect(try client.ask("0200000400000100a1616401") == "0300000500000100a162726303")
    #expect(try client.ask("0000000000400700") == "0100000500400700a162726308")
    #expect(try client.ask("1800000000000506") == "0900000500000506a16272630d")
    // Over buf_size (2048): rc 7.
    let big = "02000802" + "00000100" + String(repeating: "00", count: 2050)
    #expect(try client.ask(big) == "0300000500000100a162726307")
    // Shorter than a header, and a response sent to the server: no answer, nothing else happens.
    try client.send("0200")
    try client.send("0300000000000100")
    // Two clients interleaved: each gets its own answer.
    try client.send("0200000600000700a16164626869")
    #expect(try other.ask("0200000600000800a16164626f74") == "0300000600000800a16172626f74")
    #expect(try client.receive() == "0300000600000700a16172626869")
    // Still serving.
    #expect(try client.ask("0000000000000506") != nil)
    let status = try daemon.status()
    #expect(status.running == "A" && status.confirmed == "A")
    #expect(daemon.stop() == 0)
  }
}

/// A bare UDP client on loopback, for sending what no MCUmgr client would.
final class UDPClient {
  private let descriptor: Int32
  private var address = sockaddr_in()

  init(address text: String) throws {
    descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(1337).bigEndian
    guard inet_pton(AF_INET, text, &address.sin_addr) == 1 else { throw DaemonError("bad address \(text)") }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }

  deinit { close(descriptor) }

  func send(_ hex: String) throws {
    let bytes = Self.bytes(hex)
    let sent = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        sendto(descriptor, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard sent == bytes.count else { throw DaemonError("sendto failed") }
  }

  /// The next datagram as hex; nil after 5 s without one.
  func receive() throws -> String? {
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = recv(descriptor, &buffer, buffer.count, 0)
    guard count >= 0 else { return nil }
    return buffer.prefix(count).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
  }

  func ask(_ hex: String) throws -> String? {
    try send(hex)
    return try receive()
  }

  static func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.filter { $0 != " " })
    return stride(from: 0, to: digits.count - 1, by: 2).map {
      UInt8(String(digits[$0...$0 + 1]), radix: 16) ?? 0
    }
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

extension SMPProcessTests {
  @Test func anOTAPrepareIsBusyWhileAnSMPUploadIsUnderWay() throws {
    // [S-ONE-2] [SEC-CHECK-5]
    // [P-SESS-5]
    let smpmgr = try SMPManager.locate()
    let daemon = try device("127.0.0.27", extra: ["--window", "4KiB"])
    let image = Self.sample("firmware-v2.bin")
    let partial = try smpmgr.python(Self.partialUpload(image, address: "127.0.0.27", stopAfter: 8000))
    #expect(Self.number(after: "stopped at", in: partial.output) != nil, "\(partial.output)")
    let push = try runTool(
      "otactl",
      ["push", image, "--device", daemon.socket, "--link", "mtu=247,interval=2ms,packets=8", "--json"])
    #expect(push.status != 0, "\(push.output)\n\(daemon.log)")
    #expect(daemon.log.contains("PREPARE refused: SMP is updating the device"), "\(daemon.log)")
    // The SMP client comes back and finishes.
    let again = try smpmgr.python(Self.partialUpload(image, address: "127.0.0.27", stopAfter: nil))
    #expect((Self.number(after: "resumed at", in: again.output) ?? 0) > 4000, "\(again.output)")
    #expect(daemon.stop() == 0)
  }
}
