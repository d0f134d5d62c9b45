import Foundation
import OTAReport
import OTATestSupport
import Testing

/// One `otactl push` to several otad processes at once over the simulated link: each device its
/// own session, a failure or a lost device never stops the others, the summary says each outcome.
@Suite(.serialized) struct FleetProcessTests {
  static let firmware = testBytes(5000, seed: 1)

  func writeImage(_ bytes: [UInt8], in daemon: Daemon) throws -> String {
    let url = daemon.folder.appendingPathComponent("image.bin")
    try Data(bytes).write(to: url)
    return url.path
  }

  func summary(_ result: CommandResult) -> [String: Any] {
    result.jsonLines.last { $0["event"] as? String == "summary" } ?? [:]
  }

  func devices(_ summary: [String: Any]) -> [[String: Any]] { summary["devices"] as? [[String: Any]] ?? [] }

  func running(_ daemon: Daemon) throws -> (slot: String, version: String?) {
    let status = try daemon.status()
    return (status.running, status.runningVersion)
  }

  /// Three devices: one confirms, one is killed with SIGKILL mid-transfer and restarted (its push
  /// resumes from the committed offset and confirms), one fails its health check and rolls back.
  /// The push exits 14 and its summary says which device ended how and why.
  @Test func threeDevicesOneKilledAndResumedOneRolledBack() throws {
    let daemons = try (0..<3).map { _ in try Daemon(firmware: Self.firmware) }
    try daemons[0].start()
    try daemons[1].start()
    try daemons[2].start(extra: ["--health-check", "false", "--attempts", "1"])
    let bytes = testBytes(400_000, seed: 21)
    let image = try writeImage(bytes, in: daemons[0])
    let output = daemons[0].folder.appendingPathComponent("push.jsonl")
    FileManager.default.createFile(atPath: output.path, contents: nil)
    let pusher = Process()
    pusher.executableURL = Binaries.url("otactl")
    pusher.arguments =
      ["push", image, "--version", "2.0.0", "--link", "mtu=247,interval=4ms,packets=2", "--json"]
      + daemons.flatMap { ["--device", $0.socket] } + ["--max-reconnects", "20"]
    pusher.standardOutput = try FileHandle(forWritingTo: output)
    pusher.standardError = FileHandle.nullDevice
    pusher.standardInput = FileHandle.nullDevice
    try pusher.run()

    // Device 1 loses power once a few windows are durable, and comes back.
    var committed = 0
    let deadline = Date().addingTimeInterval(60)
    while committed < 100_000, Date() < deadline {
      usleep(50_000)
      committed = Int((try? daemons[1].status())?.journal?.committed ?? 0)
    }
    daemons[1].killHard()
    let durable = Int(try #require(try daemons[1].status().journal).committed)
    #expect(durable >= 100_000 && durable < bytes.count, "committed \(durable) survived")
    try daemons[1].start()

    let limit = Date().addingTimeInterval(120)
    while pusher.isRunning, Date() < limit { usleep(50_000) }
    if pusher.isRunning { pusher.terminate() }
    pusher.waitUntilExit()
    let result = CommandResult(
      status: pusher.terminationStatus, output: (try? String(contentsOf: output, encoding: .utf8)) ?? "",
      errors: "")
    let logs = daemons.map(\.log).joined(separator: "\n----\n")
    #expect(
      result.status == 14, "not every device confirmed: \(result.output.suffix(3000))\n\(logs.suffix(4000))")

    let outcome = devices(summary(result))
    #expect(outcome.map { $0["device"] as? String } == daemons.map(\.socket), "in the order given")
    #expect(summary(result)["confirmed"] as? Int == 2 && summary(result)["total"] as? Int == 3)
    #expect(outcome[0]["ok"] as? Bool == true && outcome[0]["runningVersion"] as? String == "2.0.0+0")
    #expect(outcome[0]["confirmed"] as? Bool == true)
    #expect(outcome[1]["ok"] as? Bool == true && outcome[1]["confirmed"] as? Bool == true, "\(outcome[1])")
    let resumed = outcome[1]["resumedFrom"] as? [Int] ?? []
    #expect(resumed.contains(durable), "device 1 resumed from its committed offset: \(outcome[1])")
    #expect(outcome[2]["ok"] as? Bool == false && outcome[2]["exitCode"] as? Int == 7, "\(outcome[2])")
    #expect((outcome[2]["reason"] as? String ?? "").contains("health check failed"), "\(outcome[2])")
    #expect(summary(result)["aggregateGoodput"] as? Double ?? 0 > 0)

    // Every other line is one device's push line, tagged with it; each device has one result.
    let tagged = result.jsonLines.filter { $0["event"] as? String != "summary" }
    #expect(tagged.allSatisfy { daemons.map(\.socket).contains($0["device"] as? String ?? "") })
    for daemon in daemons {
      let results = tagged.filter {
        $0["device"] as? String == daemon.socket && $0["event"] as? String == "result"
      }
      #expect(results.count == 1, "\(daemon.socket): \(results)")
    }

    for daemon in daemons[0...1] {
      let now = try running(daemon)
      #expect(now.slot == "B" && now.version == "2.0.0+0", "\(now)")
      #expect(daemon.slotBytes(daemon.slotB, count: bytes.count) == bytes)
    }
    #expect(try running(daemons[2]).slot == "A", "rolled back to A")
    #expect(daemons[2].slotBytes(daemons[2].slotA, count: Self.firmware.count) == Self.firmware)
    for daemon in daemons { #expect(daemon.stop() == 0) }
  }

  /// `--parallel 1`: one link at a time, the next device's push starts after the previous one's
  /// result; a device that cannot be reached (no socket) is reported and the others go on.
  @Test func oneAtATimeAndAnUnreachableDeviceDoesNotStopTheOthers() throws {
    let daemons = try (0..<2).map { _ in try Daemon(firmware: Self.firmware) }
    for daemon in daemons { try daemon.start() }
    let image = try writeImage(testBytes(60_000, seed: 22), in: daemons[0])
    let missing = daemons[1].folder.appendingPathComponent("nobody.sock").path
    let targets = [daemons[0].socket, missing, daemons[1].socket]
    let result = try runTool(
      "otactl",
      [
        "push", image, "--version", "3.1.0", "--link", "mtu=247,interval=2ms,packets=8", "--json",
        "--parallel", "1",
        "--max-reconnects", "1",
      ]
        + targets.flatMap { ["--device", $0] })
    #expect(result.status == 14, "\(result.output)\n\(result.errors)")
    let outcome = devices(summary(result))
    #expect(outcome.map { $0["ok"] as? Bool } == [true, false, true], "\(outcome)")
    #expect(outcome[1]["exitCode"] as? Int == 3, "not reachable: \(outcome[1])")
    #expect(summary(result)["parallel"] as? Int == 1, "\(summary(result))")
    // The queue: each device's first line comes after the previous device's result.
    let lines = result.jsonLines
    func first(_ device: String) -> Int? { lines.firstIndex { $0["device"] as? String == device } }
    func resultLine(_ device: String) -> Int? {
      lines.firstIndex { $0["device"] as? String == device && $0["event"] as? String == "result" }
    }
    #expect(
      (resultLine(targets[0]) ?? .max) < (first(targets[1]) ?? -1), "\(lines.map { $0["device"] ?? "" })")
    #expect((resultLine(targets[1]) ?? .max) < (first(targets[2]) ?? -1))
    for daemon in daemons {
      #expect(try running(daemon).version == "3.1.0+0")
      #expect(daemon.stop() == 0)
    }
  }

  /// One encrypted image (imgtool's X25519 sample) to three devices at once: two hold the key and
  /// confirm it, one holds none and is refused before anything is sent to it (exit 15 in its line
  /// of the summary); the push exits 14.
  @Test func anEncryptedImageToDevicesWithAndWithoutItsKey() throws {
    // [SEC-ENC-1]
    let daemons = try (0..<3).map { _ in try Daemon(firmware: Self.firmware) }
    for (index, daemon) in daemons.enumerated() {
      guard index != 1 else {
        try daemon.start()
        continue
      }
      try daemon.start(extra: ["--decryption-key", try daemon.deviceKey("test-device-x25519")])
    }
    let image = RepositoryRoot.url("Images/mcuboot-enc-x25519-100KiB.bin").path
    let result = try runTool(
      "otactl",
      ["push", image, "--link", "mtu=247,interval=2ms,packets=8", "--json"]
        + daemons.flatMap { ["--device", $0.socket] })
    #expect(result.status == 14, "\(result.output)\n\(result.errors)")
    let outcome = devices(summary(result))
    #expect(outcome.map { $0["ok"] as? Bool } == [true, false, true], "\(outcome)")
    #expect(outcome[1]["exitCode"] as? Int == 15, "cannot decrypt: \(outcome[1])")
    for (index, daemon) in daemons.enumerated() {
      let running = try running(daemon)
      if index == 1 {
        #expect(running.slot == "A" && running.version != "2.1.0+0", "device 1 runs what it ran: \(running)")
      } else {
        #expect(running.slot == "B" && running.version == "2.1.0+0", "device \(index): \(running)")
      }
      #expect(daemon.stop() == 0)
    }
  }

  /// The same device named twice, however spelled (here once through a symbolic link to its
  /// folder, once in a --devices file), is a usage error: nothing is sent to anyone.
  @Test func theSameDeviceTwiceIsRefusedBeforeAnythingIsSent() throws {
    let daemons = try (0..<2).map { _ in try Daemon(firmware: Self.firmware) }
    for daemon in daemons { try daemon.start() }
    let image = try writeImage(testBytes(10_000, seed: 23), in: daemons[0])
    let alias = daemons[1].folder.appendingPathComponent("alias")
    try FileManager.default.createSymbolicLink(at: alias, withDestinationURL: daemons[0].folder)
    let list = daemons[1].folder.appendingPathComponent("devices.txt")
    try Data("# the room\n\(daemons[1].socket)\n\n\(alias.path)/device.sock  # the same as the first\n".utf8)
      .write(to: list)
    let result = try runTool(
      "otactl", ["push", image, "--version", "1.2.0", "--device", daemons[0].socket, "--devices", list.path])
    #expect(result.status == 64, "\(result.output)\n\(result.errors)")
    #expect(result.errors.contains("is given twice"), "\(result.errors)")
    #expect(result.errors.contains(daemons[0].socket), "names the device it is the same as: \(result.errors)")
    // A --devices file that is not there is a usage error that names it.
    let missing = daemons[1].folder.appendingPathComponent("no-such-list.txt").path
    let unreadable = try runTool(
      "otactl", ["push", image, "--version", "1.2.0", "--device", daemons[0].socket, "--devices", missing])
    #expect(unreadable.status == 64, "\(unreadable.output)\n\(unreadable.errors)")
    #expect(unreadable.errors.contains("--devices \(missing): cannot read the file"), "\(unreadable.errors)")
    for daemon in daemons {
      #expect(!daemon.log.contains("PREPARE"), "nothing was sent")
      #expect(daemon.stop() == 0)
    }
  }

  /// A device another central holds is refused cleanly (busy, exit 9 for it), never mixed; the
  /// other device of the same push is updated.
  @Test func aDeviceHeldByAnotherCentralIsRefusedAndTheOthersGoOn() throws {
    let daemons = try (0..<2).map { _ in try Daemon(firmware: Self.firmware) }
    for daemon in daemons { try daemon.start() }
    let holder = try LinkClient(path: daemons[0].socket)
    holder.send(LinkClient.hello)
    #expect(holder.receive(timeout: 2).map { $0.count > 0 } == true, "otad welcomed the first central")
    let bytes = testBytes(30_000, seed: 24)
    let image = try writeImage(bytes, in: daemons[1])
    let result = try runTool(
      "otactl",
      [
        "push", image, "--version", "4.0.0", "--link", "mtu=247,interval=2ms,packets=8", "--json",
        "--max-reconnects", "0", "--device", daemons[0].socket, "--device", daemons[1].socket,
      ])
    #expect(result.status == 14, "\(result.output)\n\(result.errors)")
    let outcome = devices(summary(result))
    #expect(outcome[0]["ok"] as? Bool == false && outcome[0]["exitCode"] as? Int == 9, "\(outcome)")
    #expect((outcome[0]["reason"] as? String ?? "").contains("busy"), "\(outcome[0])")
    #expect(outcome[1]["ok"] as? Bool == true, "\(outcome[1])")
    #expect(!daemons[0].log.contains("PREPARE"), "nothing reached the held device")
    #expect(daemons[1].slotBytes(daemons[1].slotB, count: bytes.count) == bytes)
    for daemon in daemons { #expect(daemon.stop() == 0) }
  }

  /// Each device gets its own delta choice: with `--base Images/firmware-v1.bin`, the device that
  /// runs v1 gets a delta; the one that runs v2 (from its factory slot, not confirmed by a push)
  /// gets copies of its own blocks, read with BLOCK HASHES; the one that runs v3, which no base
  /// matches and whose blocks v2 does not share, gets plain chunks (the sample firmware does not
  /// compress). All three hold v2, validated.
  @Test func eachDeviceChoosesItsOwnDelta() throws {
    let root = RepositoryRoot.url.appendingPathComponent("Images")
    func sample(_ name: String) throws -> [UInt8] {
      [UInt8](try Data(contentsOf: root.appendingPathComponent(name)))
    }
    let daemons = [
      try Daemon(capacity: "64KiB", firmware: try sample("firmware-v1.bin")),
      try Daemon(capacity: "64KiB", firmware: try sample("firmware-v2.bin")),
      try Daemon(capacity: "64KiB", firmware: try sample("firmware-v3.bin")),
    ]
    for daemon in daemons { try daemon.start() }
    let result = try runTool(
      "otactl",
      [
        "push", root.appendingPathComponent("firmware-v2.bin").path, "--base",
        root.appendingPathComponent("firmware-v1.bin").path, "--link", "mtu=247,interval=2ms,packets=8",
        "--json",
        "--no-activate",
      ] + daemons.flatMap { ["--device", $0.socket] })
    #expect(result.status == 0, "\(result.output)\n\(result.errors)")
    let results = daemons.map { daemon in
      result.jsonLines.first {
        $0["device"] as? String == daemon.socket && $0["event"] as? String == "result"
      }
        ?? [:]
    }
    #expect(results[0]["transferMode"] as? String == "delta", "\(results[0])")
    #expect(results[1]["transferMode"] as? String == "block copies", "\(results[1])")
    #expect((results[1]["bytesOnAir"] as? Int ?? .max) < 100, "v2's blocks are all there: \(results[1])")
    #expect(results[2]["transferMode"] as? String == "plain", "\(results[2])")
    #expect(
      (results[0]["bytesOnAir"] as? Int ?? .max) < (results[2]["bytesOnAir"] as? Int ?? 0),
      "the delta sends less than the plain chunks")
    #expect(devices(summary(result)).allSatisfy { $0["ok"] as? Bool == true }, "\(summary(result))")
    for daemon in daemons { #expect(daemon.stop() == 0) }
  }
}
