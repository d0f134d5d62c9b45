import Foundation
import Glibc
import Testing

/// otad's SMP server over UDP driven by a second MCUmgr client the suite did not grow up with:
/// mcumgr-toolkit (PyPI, Finomnis's client on Zephyr's SMP specification, stricter than smpclient),
/// one step at a time through Scripts/smp/mcumgr_toolkit_steps.py. Each test has a loopback address
/// of its own (127.0.0.4x): the client's port is MCUmgr's 1337.
@Suite(.serialized) struct MCUmgrToolkitProcessTests {
  static func sample(_ name: String) -> String { TrialBootProcessTests.sample(name) }

  /// otad's flags; `verdict` nil: no health check, a trial waits for a confirm (`--confirm manual`).
  func arguments(_ address: String, _ extra: [String], verdict: String? = TrialBootProcessTests.healthCheck)
    -> [String]
  {
    let trial =
      verdict.map { ["--health-check", $0] } ?? ["--confirm", "manual", "--confirm-timeout", "never"]
    return ["--smp-udp", "\(address):1337", "--attempts", "2", "--factory-version", "1.0.0"] + trial + extra
  }

  func device(
    _ address: String, extra: [String] = [], verdict: String? = TrialBootProcessTests.healthCheck
  ) throws -> Daemon {
    let factory = try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v1.bin")))
    let daemon = try Daemon(capacity: "64KiB", firmware: [UInt8](factory))
    try daemon.start(extra: arguments(address, extra, verdict: verdict))
    return daemon
  }

  /// The image states, slot by slot: "2.0.0 pending,permanent".
  static func states(_ result: [String: Any]) -> [String] {
    ((result["images"] as? [[String: Any]]) ?? []).map { image in
      let flags = ["pending", "confirmed", "active", "permanent"].filter { image[$0] as? Bool == true }
      return "\(image["version"] as? String ?? "?") \(flags.joined(separator: ","))"
    }
  }

  @Test func itsConnectionCheckEchoAndInfoAreAnswered() throws {
    // [S-CMD-1]
    let toolkit = try MCUmgrToolkit.locate()
    let daemon = try device("127.0.0.41")
    let check = try toolkit.step("127.0.0.41", "check")
    #expect(check["ok"] as? Bool == true, "\(check)\n\(daemon.log)")
    #expect(check["echo"] as? String == "otad?")
    #expect((check["echoRead"] as? [String: Any])?["r"] as? String == "read")
    #expect(check["params"] as? [Int] == [2048, 1])
    #expect((check["info"] as? String)?.hasSuffix(" otad") == true)
    #expect((check["bootloader"] as? [String: Any])?["mode"] as? Int == 3)
    #expect(daemon.stop() == 0)
  }

  @Test func uploadTestResetAndConfirmEndConfirmed() throws {
    // [S-CMD-6] [S-STATE-1] [S-CMD-7] [S-STATE-2] [S-UP-8]
    let toolkit = try MCUmgrToolkit.locate()
    let address = "127.0.0.42"
    let daemon = try device(address, verdict: nil)
    let upload = try toolkit.step(address, "upload", Self.sample("firmware-v2.bin"))
    #expect(upload["ok"] as? Bool == true, "\(upload)\n\(daemon.log)")
    let state = try toolkit.step(address, "state")
    #expect(Self.states(state) == ["1.0.0 confirmed,active", "2.0.0 "], "\(state)")
    let hash = try #require(((state["images"] as? [[String: Any]])?.last?["hash"]) as? String)
    let tested = try toolkit.step(address, "test", hash)
    #expect(Self.states(tested) == ["1.0.0 confirmed,active", "2.0.0 pending"], "\(tested)")
    _ = try toolkit.step(address, "reset")
    _ = try daemon.waitForStatus { $0.running == "B" && $0.onTrial == true }
    // On trial: the new image active, not confirmed; the old one confirmed only, as Zephyr shows it.
    let trial = try toolkit.step(address, "state")
    #expect(Self.states(trial) == ["2.0.0 active", "1.0.0 confirmed"], "\(trial)\n\(daemon.log)")
    let confirmed = try toolkit.step(address, "confirm")
    #expect(Self.states(confirmed) == ["2.0.0 confirmed,active", "1.0.0 "], "\(confirmed)")
    let status = try daemon.waitForStatus { $0.confirmed == "B" }
    #expect(status.running == "B" && status.onTrial == false, "\(daemon.log)")
    #expect(daemon.stop() == 0)
  }

  /// mcumgr-toolkit uploads imgtool's encrypted sample (P-256, AES-256) unchanged to otad holding
  /// its key: slot 1 shows the image's own hash (of the plaintext), and a test, reset and confirm
  /// end on it. Without the key the first chunk is refused: image rc 22.
  @Test func anEncryptedImageUploadsAndEndsConfirmed() throws {
    // [SEC-ENC-1] [S-UP-10]
    let toolkit = try MCUmgrToolkit.locate()
    let image = Self.sample("mcuboot-enc-p256-aes256-4099B.bin")
    let without = try device("127.0.0.47", verdict: nil)
    let refused = try toolkit.step("127.0.0.47", "upload", image)
    #expect(refused["ok"] as? Bool != true, "\(refused)")
    #expect("\(refused)".contains("22") || "\(refused)".contains("INVALID_IMAGE_HEADER"), "\(refused)")
    #expect(without.stop() == 0)

    let address = "127.0.0.48"
    let factory = try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v1.bin")))
    let daemon = try Daemon(capacity: "64KiB", firmware: [UInt8](factory))
    let key = try daemon.deviceKey("test-device-ecdsa-p256")
    try daemon.start(extra: arguments(address, ["--decryption-key", key, "--allow-downgrade"], verdict: nil))
    let upload = try toolkit.step(address, "upload", image)
    #expect(upload["ok"] as? Bool == true, "\(upload)\n\(daemon.log)")
    let state = try toolkit.step(address, "state")
    #expect(Self.states(state) == ["1.0.0 confirmed,active", "1.3.0 "], "\(state)")
    let hash = try #require(((state["images"] as? [[String: Any]])?.last?["hash"]) as? String)
    _ = try toolkit.step(address, "test", hash)
    _ = try toolkit.step(address, "reset")
    _ = try daemon.waitForStatus { $0.running == "B" && $0.onTrial == true }
    let confirmed = try toolkit.step(address, "confirm")
    #expect(Self.states(confirmed) == ["1.3.0 confirmed,active", "1.0.0 "], "\(confirmed)")
    #expect(daemon.stop() == 0)
  }

  @Test func firmwareUpdateLetsTheTrialDecideOrWithForceConfirmSwitchesForGood() throws {
    let toolkit = try MCUmgrToolkit.locate()
    for (address, force) in [("127.0.0.43", false), ("127.0.0.44", true)] {
      let daemon = try device(address)
      let update = try toolkit.step(
        address, "update", Self.sample("firmware-v2.bin"), options: force ? ["--force-confirm"] : [])
      #expect(update["ok"] as? Bool == true, "\(update)\n\(daemon.log)")
      let status = try daemon.waitForStatus { $0.confirmed == "B" }
      #expect(status.running == "B" && status.onTrial == false, "\(daemon.log)")
      // Without force_confirm the health check confirmed a trial; with it, no trial ran.
      #expect(daemon.log.contains("into trial B") == !force, "\(daemon.log)")
      let state = try toolkit.step(address, "state")
      #expect(Self.states(state).first == "2.0.0 confirmed,active", "\(state)")
      #expect(daemon.stop() == 0)
    }
  }

  @Test func refusalsAndEraseAreWhatZephyrAnswers() throws {
    // [S-CMD-8] [S-ERR-1]
    let toolkit = try MCUmgrToolkit.locate()
    let address = "127.0.0.45"
    let daemon = try device(address)
    let downgrade = try toolkit.step(
      address, "upload", Self.sample("firmware-v1.bin"), options: ["--upgrade-only"])
    #expect(
      (downgrade["error"] as? String)?.contains("IMG_MGMT_ERR_CURRENT_VERSION_IS_NEWER") == true,
      "\(downgrade)")
    let big = FileManager.default.temporaryDirectory.appendingPathComponent("big-\(UUID().uuidString).bin")
    defer { try? FileManager.default.removeItem(at: big) }
    let v2 = try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v2.bin")))
    try (v2 + Data(count: 70_000)).write(to: big)
    let tooLarge = try toolkit.step(address, "upload", big.path)
    #expect(
      (tooLarge["error"] as? String)?.contains("IMG_MGMT_ERR_INVALID_IMAGE_TOO_LARGE") == true, "\(tooLarge)")

    #expect(try toolkit.step(address, "upload", Self.sample("firmware-v2.bin"))["ok"] as? Bool == true)
    #expect(Self.states(try toolkit.step(address, "state")).count == 2)
    #expect(try toolkit.step(address, "erase")["ok"] as? Bool == true)
    #expect(Self.states(try toolkit.step(address, "state")) == ["1.0.0 confirmed,active"])
    #expect(daemon.stop() == 0)
  }

  @Test func anUploadCutByAnOtadRestartIsFinishedFromTheOffsetItIsTold() throws {
    // [S-UP-7]
    let toolkit = try MCUmgrToolkit.locate()
    let address = "127.0.0.46"
    let daemon = try device(address, extra: ["--window", "4KiB"])
    let pid = try #require(daemon.process?.processIdentifier)
    // The client SIGKILLs otad past 20 000 bytes and waits for it to answer again; the test starts it.
    let upload = try toolkit.start(
      address, "upload", Self.sample("firmware-v2.bin"),
      options: ["--kill-pid", "\(pid)", "--kill-at", "20000"])
    let deadline = Date().addingTimeInterval(60)
    while daemon.process?.isRunning == true, Date() < deadline { usleep(20_000) }
    try daemon.start(extra: arguments(address, ["--window", "4KiB"]))
    let result = try upload.finish()
    #expect(result["ok"] as? Bool == true, "\(result)\n\(daemon.log)")
    let killed = try #require(result["killed"] as? Int, "\(result)")
    let resumed = try #require(result["resumedAt"] as? Int, "\(result)")
    // Told the journal's committed offset: whole 4 KiB windows, at most where it was.
    #expect(resumed >= 16 * 1024 && resumed <= killed, "resumed at \(resumed) after \(killed)")
    #expect(Self.states(try toolkit.step(address, "state")) == ["1.0.0 confirmed,active", "2.0.0 "])
    #expect(daemon.stop() == 0)
  }
}

/// mcumgr-toolkit's Python: $BLUEOTA_MCUMGR_TOOLKIT_PYTHON, then `<repo>/.build-mcumgr-toolkit/bin/python`
/// (Scripts/setup.sh's blueota_install_mcumgr_toolkit).
struct MCUmgrToolkit {
  let python: URL
  static let script = TrialBootProcessTests.root.appendingPathComponent("Scripts/smp/mcumgr_toolkit_steps.py")

  static func locate() throws -> MCUmgrToolkit {
    var candidates: [String] = []
    if let configured = ProcessInfo.processInfo.environment["BLUEOTA_MCUMGR_TOOLKIT_PYTHON"],
      !configured.isEmpty
    {
      candidates.append(configured)
    }
    candidates.append(
      TrialBootProcessTests.root.appendingPathComponent(".build-mcumgr-toolkit/bin/python").path)
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
      throw DaemonError(
        "mcumgr-toolkit not found: run Scripts/setup.sh (blueota_install_mcumgr_toolkit) or set "
          + "BLUEOTA_MCUMGR_TOOLKIT_PYTHON")
    }
    return MCUmgrToolkit(python: URL(fileURLWithPath: found))
  }

  /// One step, run to its end: the JSON line it printed.
  func step(_ address: String, _ step: String, _ argument: String? = nil, options: [String] = []) throws
    -> [String: Any]
  {
    try start(address, step, argument, options: options).finish()
  }

  func start(_ address: String, _ step: String, _ argument: String? = nil, options: [String] = []) throws
    -> Running
  {
    let process = Process()
    process.executableURL = python
    process.arguments = [Self.script.path, "--ip", address, step] + (argument.map { [$0] } ?? []) + options
    let output = FileManager.default.temporaryDirectory.appendingPathComponent(
      "toolkit-\(UUID().uuidString).out")
    FileManager.default.createFile(atPath: output.path, contents: nil)
    let handle = try FileHandle(forWritingTo: output)
    process.standardOutput = handle
    process.standardError = handle
    process.standardInput = FileHandle.nullDevice
    try process.run()
    return Running(process: process, handle: handle, output: output)
  }

  struct Running {
    let process: Process
    let handle: FileHandle
    let output: URL

    func finish() throws -> [String: Any] {
      let deadline = Date().addingTimeInterval(90)
      while process.isRunning, Date() < deadline { usleep(20_000) }
      if process.isRunning { process.terminate() }
      process.waitUntilExit()
      try handle.close()
      defer { try? FileManager.default.removeItem(at: output) }
      let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
      guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("{\"ok\"") }),
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      else { throw DaemonError("mcumgr_toolkit_steps.py printed no result: \(text)") }
      return object
    }
  }
}
