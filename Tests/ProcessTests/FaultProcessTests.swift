import Foundation
import Testing

/// Faults on demand (docs/APP-TESTING.md) with the real otad and otactl over the simulated link:
/// each fault fires as set, is logged, and the device ends on a good image every time; otactl, a
/// client that follows the protocol, gets past every fault that leaves it a way to (a resume, a
/// resend, a retry) and names the ones that do not.
@Suite(.serialized) struct FaultProcessTests {
  static let firmware = testBytes(5000, seed: 61)
  static let link = "mtu=247,interval=2ms,packets=8"

  func image(in daemon: Daemon, size: Int = 150_000, seed: UInt64 = 62) throws -> String {
    let url = daemon.folder.appendingPathComponent("image-\(seed).bin")
    try Data(testBytes(size, seed: seed)).write(to: url)
    return url.path
  }

  func push(_ image: String, _ version: String, to daemon: Daemon, _ extra: [String] = []) throws
    -> CommandResult
  {
    try runTool(
      "otactl",
      ["push", image, "--version", version, "--device", daemon.socket, "--link", Self.link, "--json"] + extra)
  }

  func result(_ push: CommandResult) -> [String: Any] {
    push.jsonLines.last { $0["event"] as? String == "result" } ?? [:]
  }

  /// Where the push first resumed (otactl's `resumedFrom`: one offset per resume), 0 for none.
  func resumedFrom(_ result: [String: Any]) -> Int {
    (result["resumedFrom"] as? [Int])?.first ?? 0
  }

  func fault(_ daemon: Daemon, _ words: [String]) throws -> CommandResult {
    try runTool("otad", ["fault", "--state-dir", daemon.stateDirectory.path] + words)
  }

  func runningVersion(_ daemon: Daemon) throws -> String? {
    try daemon.status().runningVersion
  }

  @Test func aDropAtAShareOfTheImageIsResumedPastIt() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: ["--allow-faults", "--fault", "drop-link after=37%"])
    let push = try push(try image(in: daemon), "2.0.0", to: daemon)
    #expect(push.status == 0, "\(push.errors)\n\(daemon.log)")
    let final = result(push)
    #expect(final["reconnects"] as? Int == 1, "\(final)")
    #expect(resumedFrom(final) > 0, "resumed from what was committed: \(final)")
    #expect(final["runningVersion"] as? String == "2.0.0+0")
    #expect(daemon.log.contains("fault 1 fired (1 of 1): drop-link after=37% times=1"), "\(daemon.log)")
    #expect(daemon.log.contains("faults on demand are allowed"))
  }

  @Test func aRefusalSetThroughTheControlFailsThePushUntilCleared() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: ["--allow-faults"])
    let added = try fault(
      daemon, ["add", "refuse", "at=validate", "status=validation-failed", "times=always"])
    #expect(added.status == 0, "\(added.errors)")
    #expect(added.output == "added fault 1: refuse status=validation-failed at=validate times=always\n")
    let image = try image(in: daemon)
    let refused = try push(image, "2.0.0", to: daemon)
    #expect(refused.status == 6, "otactl: validation failed\n\(refused.errors)")
    #expect(try runningVersion(daemon) == "1.0.0+0", "the running image is untouched")
    let list = try fault(daemon, ["list"])
    #expect(
      list.output.hasPrefix("1: refuse status=validation-failed at=validate times=always (fired "),
      "\(list.output)")
    #expect(try fault(daemon, ["clear"]).output == "cleared 1 fault\n")
    let pushed = try push(image, "2.0.0", to: daemon)
    #expect(pushed.status == 0, "\(pushed.errors)\n\(daemon.log)")
    #expect(result(pushed)["runningVersion"] as? String == "2.0.0+0")
  }

  @Test func aCorruptedAndALostChunkAreCaughtAndSentAgain() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: [
      "--allow-faults", "--fault", "corrupt-chunk after=50%", "--fault", "lose-chunk after=20%",
    ])
    let image = try image(in: daemon)
    let push = try push(image, "2.0.0", to: daemon)
    #expect(push.status == 0, "\(push.errors)\n\(daemon.log)")
    let final = result(push)
    #expect((final["windowFailures"] as? Int ?? 0) >= 1, "the corrupted window failed its CRC: \(final)")
    #expect((final["bytesResent"] as? Int ?? 0) > 0, "\(final)")
    #expect(daemon.log.contains("corrupt-chunk after=50% times=1"), "\(daemon.log)")
    #expect(daemon.log.contains("lose-chunk after=20% times=1"))
    let written = daemon.slotBytes(daemon.slotB, count: 150_000)
    #expect(written == testBytes(150_000, seed: 62), "the slot holds the image, not the corrupted byte")
  }

  @Test func aFullStorageFailsThePushAsStorageAndTheNextPushResumes() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: ["--allow-faults", "--fault", "storage-full after=50% times=always"])
    let image = try image(in: daemon)
    let failed = try push(image, "2.0.0", to: daemon)
    #expect(failed.status == 13, "otactl blames the storage\n\(failed.errors)")
    #expect(daemon.log.contains("No space left on device"), "\(daemon.log)")
    #expect(try fault(daemon, ["remove", "1"]).output == "removed fault 1\n")
    let pushed = try push(image, "2.0.0", to: daemon)
    #expect(pushed.status == 0, "\(pushed.errors)")
    #expect(resumedFrom(result(pushed)) > 0, "what was committed stayed: \(result(pushed))")
  }

  @Test func aDelayedAnswerStillEndsInTheUpdate() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: ["--allow-faults", "--fault", "delay by=1500ms at=prepare"])
    let push = try push(try image(in: daemon, size: 20_000), "2.0.0", to: daemon)
    #expect(push.status == 0, "\(push.errors)\n\(daemon.log)")
    #expect((result(push)["seconds"] as? Double ?? 0) >= 1.5, "PREPARE's answer came 1.5 s late")
    #expect(daemon.log.contains("fault 1 fired (1 of 1): delay by=1500ms at=prepare times=1"))
  }

  @Test func aRestartMidTransferIsResumedAfterIt() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: ["--allow-faults", "--fault", "restart after=40%"])
    let push = try push(try image(in: daemon), "2.0.0", to: daemon, ["--max-reconnects", "10"])
    #expect(push.status == 0, "\(push.errors)\n\(daemon.log)")
    #expect((result(push)["reconnects"] as? Int ?? 0) >= 1)
    #expect(daemon.log.contains("restarting: a fault asked for a restart"), "\(daemon.log)")
    #expect(
      daemon.log.components(separatedBy: "fault 1 fired").count == 2,
      "once, though the restart re-read the book")
  }

  @Test func aPowerCutKeepsWhatWasCommittedAndFiresOnce() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    let arguments = ["--allow-faults", "--fault", "power-cut after=30%"]
    try daemon.start(extra: arguments)
    let image = try image(in: daemon)
    let cut = try push(image, "2.0.0", to: daemon, ["--max-reconnects", "0"])
    #expect(cut.status != 0)
    daemon.process?.waitUntilExit()
    #expect(
      daemon.process?.terminationReason == .uncaughtSignal && daemon.process?.terminationStatus == SIGKILL)
    try daemon.start(extra: arguments)
    let pushed = try push(image, "2.0.0", to: daemon)
    #expect(pushed.status == 0, "\(pushed.errors)\n\(daemon.log)")
    #expect(resumedFrom(result(pushed)) > 0, "\(result(pushed))")
    #expect(daemon.log.components(separatedBy: "fault 1 fired").count == 2, "the book kept that it fired")
  }

  @Test func aFailedHealthCheckRollsTheUpdateBack() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: ["--allow-faults", "--fault", "fail-health-check", "--attempts", "1"])
    let push = try push(try image(in: daemon, size: 20_000), "2.0.0", to: daemon)
    #expect(push.status == 7, "otactl: rolled back\n\(push.errors)\n\(daemon.log)")
    let status = try daemon.waitForStatus {
      $0.lastOutcome.result == "rolled back"
    }
    #expect(try runningVersion(daemon) == "1.0.0+0", "\(status)")
    #expect(
      status.lastOutcome.reason == "health check failed", "\(status)")
    #expect(daemon.log.contains("the health check failed (a fault asked for it)"), "\(daemon.log)")
  }

  @Test func theSessionReportTellsWhatTheCentralDidAndWhatFired() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    let folder = daemon.folder.appendingPathComponent("sessions")
    try daemon.start(extra: ["--allow-faults", "--fault", "drop-link after=37%", "--sessions", folder.path])
    let push = try push(try image(in: daemon), "2.0.0", to: daemon)
    #expect(push.status == 0, "\(push.errors)")
    // The last session's report is written when otactl hangs up, which may come after its exit.
    var names: [String] = []
    let deadline = Date().addingTimeInterval(10)
    repeat {
      names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
      let texts = names.filter { $0.hasSuffix(".txt") }.count
      if texts >= 3, names.filter({ $0.hasSuffix(".json") }).count == texts { break }
      usleep(50_000)
    } while Date() < deadline
    let texts = names.filter { $0.hasSuffix(".txt") }
    #expect(texts.count >= 3, "the dropped session, the resumed one, the check after the restart: \(names)")
    #expect(names.filter { $0.hasSuffix(".json") }.count == texts.count)
    let first = try String(contentsOf: folder.appendingPathComponent(texts[0]), encoding: .utf8)
    #expect(first.hasPrefix("session 1: OTA central, from "), "\(first)")
    #expect(first.contains("PREPARE, 150000 bytes") && first.contains("data: "), "\(first)")
    #expect(first.contains("fault 1 fired (1 of 1): drop-link after=37% times=1"), "\(first)")
    let second = try String(contentsOf: folder.appendingPathComponent(texts[1]), encoding: .utf8)
    #expect(second.contains("the central came back "), "\(second)")
    #expect(second.contains("  resumed at "), "\(second)")
    #expect(second.contains("ended: the device restarted (ACTIVATE"), "\(second)")
    let trace = try Data(contentsOf: folder.appendingPathComponent(names.first { $0.hasSuffix(".json") }!))
    let document = try #require(try JSONSerialization.jsonObject(with: trace) as? [String: Any])
    let events = try #require(document["traceEvents"] as? [[String: Any]])
    #expect(events.contains { $0["name"] as? String == "fault" }, "the fault is on the trace")
  }

  /// The faults file is otad's: damaged or absurdly large, it is set aside with a warning that says
  /// so, and the configuration's faults still hold.
  @Test func aDamagedOrHugeFaultsFileIsSetAsideAndTheConfiguredFaultsHold() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try FileManager.default.createDirectory(at: daemon.stateDirectory, withIntermediateDirectories: true)
    let file = daemon.stateDirectory.appendingPathComponent("faults")
    try Data(testBytes(100_000, seed: 63)).write(to: file)
    try daemon.start(extra: ["--allow-faults", "--fault", "drop-link after=37%"])
    #expect(
      daemon.log.contains("the faults file \(file.path) is not a faults file (100000 bytes"), "\(daemon.log)")
    _ = daemon.stop()
    try Data("otad faults 1\n1 control zero 0 drop-link after=5 times=1\n".utf8).write(to: file)
    try daemon.start(extra: ["--allow-faults", "--fault", "drop-link after=37%"])
    #expect(daemon.log.contains("the faults file \(file.path) is damaged (a damaged line"), "\(daemon.log)")
    let push = try push(try image(in: daemon), "2.0.0", to: daemon)
    #expect(push.status == 0, "\(push.errors)")
    #expect(result(push)["reconnects"] as? Int == 1, "the configured drop fired once: \(result(push))")
    let list = try fault(daemon, ["list"])
    #expect(
      list.output == "1: drop-link after=37% times=1 (fired 1, spent; from the configuration)\n",
      "\(list.output)")
  }

  @Test func faultsAreRefusedUnlessAllowed() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    let refused = try runTool("otad", ["run"] + daemon.baseArguments + ["--fault", "drop-link after=37%"])
    #expect(refused.status == 64, "\(refused.errors)")
    #expect(
      refused.errors.contains("but not allowed: set [faults] allow = true (or --allow-faults)"),
      "\(refused.errors)")
    let bad = try runTool(
      "otad", ["run"] + daemon.baseArguments + ["--allow-faults", "--fault", "drop-link"])
    #expect(bad.status == 64)
    #expect(bad.errors.contains("--fault 'drop-link': drop-link needs at=REQUEST or after="), "\(bad.errors)")
    try daemon.start()
    let control = try fault(daemon, ["list"])
    #expect(control.status == 64, "\(control.errors)")
    #expect(control.errors.contains("no otad with faults allowed answers at"), "\(control.errors)")
  }

  @Test func aControlClientThatSaysNothingStallsNothing() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: ["--allow-faults"])
    let silent = (0..<6).compactMap { _ in try? RawSocket(path: daemon.stateDirectory.path + "/faults.sock") }
    #expect(silent.count == 6)
    let push = try push(try image(in: daemon, size: 20_000), "2.0.0", to: daemon)
    #expect(push.status == 0, "\(push.errors)")
    // The silent clients hold every place until their 2 s run out: only then is a command heard.
    var list = try fault(daemon, ["list"])
    let deadline = Date().addingTimeInterval(10)
    while list.output != "no faults\n", Date() < deadline {
      usleep(200_000)
      list = try fault(daemon, ["list"])
    }
    #expect(list.output == "no faults\n", "the silent clients were let go: \(list.output)\(list.errors)")
    for socket in silent { socket.close() }
  }
}
