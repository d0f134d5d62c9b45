import Foundation
import OTAReport
import Testing

/// otad and otactl as two processes over the simulated link: what a user runs.
@Suite(.serialized) struct TwoProcessTests {
  static let firmware = testBytes(5000, seed: 1)

  func writeImage(_ bytes: [UInt8], in daemon: Daemon, name: String) throws -> String {
    let url = daemon.folder.appendingPathComponent(name)
    try Data(bytes).write(to: url)
    return url.path
  }

  /// `otactl push IMAGE --version V --device <daemon> --link LINK EXTRA...`
  func push(
    _ image: String, version: String, to daemon: Daemon, link: String = "mtu=247,interval=2ms,packets=8",
    _ extra: [String] = []
  ) throws -> CommandResult {
    try runTool(
      "otactl", ["push", image, "--version", version, "--device", daemon.socket, "--link", link] + extra)
  }

  func running(_ status: DeviceStatusReport) -> (slot: String, version: String?) {
    (status.running, status.runningVersion)
  }

  @Test func aPushWithLossAndDisconnectsCompletes() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let image = try writeImage(testBytes(150_000, seed: 2), in: daemon, name: "image.bin")
    let result = try push(
      image, version: "2.3.4", to: daemon,
      link: "mtu=185,interval=2ms,packets=8,loss=0.02,reorder=0.05,drop=0.004,disconnect-after=50000,seed=11",
      ["--json", "--max-reconnects", "20"])
    #expect(result.status == 0, "\(result.output)\n\(result.errors)\n\(daemon.log)")
    let final = try #require(result.jsonLines.last { $0["event"] as? String == "result" })
    #expect(final["ok"] as? Bool == true)
    // Once for sure (disconnect-after), and by chance more: with missing-range reports a push takes
    // too few connection events for drop= alone to drop it reliably.
    #expect((final["reconnects"] as? Int ?? 0) >= 1, "the link dropped: \(final)")
    #expect(final["runningVersion"] as? String == "2.3.4+0")
    // Lost chunks were named by the device and resent: both processes took the new path.
    #expect(
      (final["missingReports"] as? Int ?? 0) > 0 && (final["chunksResent"] as? Int ?? 0) > 0, "\(final)")
    // Every field docs/OTACTL.md names for a successful result line, and no other.
    let documented: Set = [
      "event", "ok", "seconds", "goodput", "rawCapacity", "ratio", "physicalCeiling", "ceilingRatio", "mtu",
      "bytesSent", "bytesOnAir", "transferMode", "plannedBytesOnAir", "plainBytesOnAir", "blockSize",
      "blockHashesRead", "blockHashRequests", "dryRun", "windows",
      "windowFailures", "bytesResent", "chunksResent", "missingReports", "reconnects", "resumedFrom",
      "runningVersion", "runningSlot", "confirmed",
      "alreadyRunning", "joinedTrial", "transferSeconds", "transferGoodput", "transferCeilingRatio",
      "dataPath", "attMTU",
    ]
    #expect(Set(final.keys) == documented, "\(final)")
    let status = try daemon.status()
    #expect(running(status).slot == "B" && running(status).version == "2.3.4+0")
    #expect(daemon.slotBytes(daemon.slotB, count: 150_000) == testBytes(150_000, seed: 2))
    #expect(daemon.slotBytes(daemon.slotA, count: 5000) == Self.firmware, "the old running slot is untouched")
    #expect(daemon.stop() == 0, "SIGTERM stops otad cleanly")
  }

  @Test func killNineMidTransferThenPushAgainResumesFromTheCommittedOffset() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let bytes = testBytes(400_000, seed: 3)
    let image = try writeImage(bytes, in: daemon, name: "image.bin")
    let slowLink = "mtu=247,interval=4ms,packets=2"
    let pusher = Process()
    pusher.executableURL = Binaries.url("otactl")
    pusher.arguments = ["push", image, "--version", "5.0.0", "--device", daemon.socket, "--link", slowLink]
    pusher.standardOutput = FileHandle.nullDevice
    pusher.standardError = FileHandle.nullDevice
    try pusher.run()
    // Wait until a few windows are committed, then pull the plug on the daemon.
    var committed = 0
    let deadline = Date().addingTimeInterval(60)
    while committed < 100_000, Date() < deadline {
      usleep(50_000)
      committed = Int((try? daemon.status())?.journal?.committed ?? 0)
    }
    daemon.killHard()
    // SIGKILL: a SIGTERM may be blocked in the mask children inherit from the test runner.
    kill(pusher.processIdentifier, SIGKILL)
    pusher.waitUntilExit()
    let durable = Int(try #require(try daemon.status().journal).committed)
    #expect(durable >= 100_000 && durable < bytes.count, "committed \(durable) survived SIGKILL")

    try daemon.start()
    let result = try push(image, version: "5.0.0", to: daemon)
    #expect(result.status == 0, "\(result.output)\n\(result.errors)")
    #expect(result.output.contains("resuming from byte \(durable)"), "\(result.output)")
    #expect(daemon.slotBytes(daemon.slotB, count: bytes.count) == bytes)
    #expect(running(try daemon.status()).version == "5.0.0+0")
  }

  @Test func anImageWhoseCRCDoesNotMatchItsPrepareIsRefusedAtValidate() throws {
    // [P-VAL-2]
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let image = try writeImage(testBytes(40_000, seed: 4), in: daemon, name: "image.bin")
    let result = try push(image, version: "6.0.0", to: daemon, ["--announce-crc", "deadbeef"])
    #expect(result.status == 6, "exit code 6 is validation failed: \(result.errors)")
    #expect(result.errors.contains("validation failed"), "\(result.errors)")
    let status = try daemon.status()
    #expect(running(status).slot == "A" && running(status).version == "1.0.0+0")
    #expect(daemon.slotBytes(daemon.slotA, count: 5000) == Self.firmware, "the running slot is untouched")
    #expect(status.transfer == .missing, "the refused transfer is dropped")
  }

  @Test func aPushToADeviceMidwayThroughAnotherImageStartsCleanly() throws {
    // [P-REQ-1]
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let first = try writeImage(testBytes(200_000, seed: 5), in: daemon, name: "first.bin")
    let cut = try push(
      first, version: "7.0.0", to: daemon, link: "mtu=247,interval=2ms,packets=8,disconnect-after=170000",
      ["--max-reconnects", "0"])
    #expect(cut.status == 3, "the cut-off push reports the device unreachable: \(cut.errors)")
    let midway = try #require(try daemon.status().journal)
    #expect(midway.size == 200_000 && midway.committed > 0)

    let secondBytes = testBytes(90_000, seed: 6)
    let second = try writeImage(secondBytes, in: daemon, name: "second.bin")
    let result = try push(second, version: "8.0.0", to: daemon, ["--json"])
    #expect(result.status == 0, "\(result.errors)")
    #expect(
      !result.jsonLines.contains { $0["event"] as? String == "resume" },
      "nothing of the first image is reused")
    #expect(daemon.slotBytes(daemon.slotB, count: secondBytes.count) == secondBytes)
    #expect(running(try daemon.status()).version == "8.0.0+0")
  }

  @Test func badArgumentsAndAMissingDeviceSayWhatToDo() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    let image = try writeImage(testBytes(100, seed: 7), in: daemon, name: "image.bin")
    let raw = try runTool("otactl", ["push", image, "--device", daemon.socket])
    #expect(raw.status == 64 && raw.errors.contains("--version"), "\(raw.errors)")
    let nobody = try runTool(
      "otactl", ["push", image, "--version", "1.0.0", "--device", daemon.socket, "--max-reconnects", "1"])
    #expect(nobody.status == 3 && nobody.errors.contains("is otad running"), "\(nobody.errors)")
    let badLink = try runTool("otactl", ["info", "--device", daemon.socket, "--link", "mtu=9"])
    #expect(badLink.status == 64 && badLink.errors.contains("mtu=9"), "\(badLink.errors)")
    let missingSlots = try runTool("otad", ["run", "--socket", daemon.socket])
    #expect(missingSlots.status == 64 && missingSlots.errors.contains("--slot-a"), "\(missingSlots.errors)")
  }

  @Test func infoAndAbortShowAndDropAValidatedImage() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let image = try writeImage(testBytes(30_000, seed: 9), in: daemon, name: "image.bin")
    let pushed = try push(image, version: "1.5.0", to: daemon, ["--no-activate"])
    #expect(pushed.status == 0, "\(pushed.errors)")
    let info = try runTool("otactl", ["info", "--device", daemon.socket, "--json"])
    let validated = try #require(
      try JSONSerialization.jsonObject(with: Data(info.output.utf8)) as? [String: Any])
    #expect(validated["state"] as? String == "validated" && validated["runningSlot"] as? String == "A")
    #expect((validated["transfer"] as? [String: Any])?["version"] as? String == "1.5.0+0")
    let abort = try runTool("otactl", ["abort", "--device", daemon.socket])
    #expect(abort.status == 0 && abort.output.contains("ABORT: success"), "\(abort.output)")
    let after = try runTool("otactl", ["info", "--device", daemon.socket])
    #expect(after.output.contains("state: idle"), "\(after.output)")
    #expect(try daemon.status().transfer == .missing)
  }

  /// The identity otad is given on its command line, as `otactl info` shows it in text and JSON.
  @Test func infoShowsTheIdentityOtadWasGiven() throws {
    // [P-GATT-10] [P-GATT-11] [P-GATT-12]
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: ["--serial", "SN-42", "--model", "blueota-sim", "--hardware-revision", "1.0"])
    let text = try runTool("otactl", ["info", "--device", daemon.socket])
    #expect(text.status == 0, "\(text.errors)\n\(daemon.log)")
    for line in ["serial: SN-42", "model: blueota-sim", "hardware revision: 1.0"] {
      #expect(text.output.contains(line), "\(text.output)")
    }
    let json = try runTool("otactl", ["info", "--device", daemon.socket, "--json"])
    let info = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
    #expect(info["serial"] as? String == "SN-42" && info["model"] as? String == "blueota-sim")
    #expect(info["hardwareRevision"] as? String == "1.0")
  }

  /// Anything at all sent to the device's socket: it drops that client and keeps serving.
  @Test func garbageOnTheLinkDropsThatClientOnly() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let garbage: [[UInt8]] = [
      [0xFF, 0xFF, 0x00], [0x05, 0x00, 0x10, 0x01, 0x03, 0x00, 0x00],  // a write before hello
      [0x01, 0x00, 0x77], Array(repeating: 0xAA, count: 4000),
    ]
    for bytes in garbage {
      let socket = try RawSocket(path: daemon.socket)
      socket.send(bytes)
      socket.close()
    }
    let info = try runTool("otactl", ["info", "--device", daemon.socket])
    #expect(info.status == 0 && info.output.contains("running: slot A"), "\(info.errors)\n\(daemon.log)")
  }
}
