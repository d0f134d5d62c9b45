import Foundation
import Testing

/// otactl when the device already has what it is asked for (issue 12, "Smaller"): the running,
/// confirmed version is not sent again (unless --force), a re-push of the version on trial waits for
/// that trial's verdict instead of being refused, `otactl confirm` with nothing on trial says so, and
/// ACTIVATE refusing the image exits 6 like VALIDATE. And Info's chunk size is right on first read.
@Suite(.serialized) struct AlreadyThereProcessTests {
  static let firmware = testBytes(5000, seed: 21)
  static let link = "mtu=247,interval=2ms,packets=8"

  func writeImage(_ bytes: [UInt8], in daemon: Daemon) throws -> String {
    let url = daemon.folder.appendingPathComponent("image.bin")
    try Data(bytes).write(to: url)
    return url.path
  }

  func push(_ image: String, _ version: String, to daemon: Daemon, _ extra: [String] = []) throws
    -> CommandResult
  {
    try runTool(
      "otactl", ["push", image, "--version", version, "--device", daemon.socket, "--link", Self.link] + extra)
  }

  func result(_ command: CommandResult) -> [String: Any] {
    command.jsonLines.last { $0["event"] as? String == "result" } ?? [:]
  }

  func info(_ daemon: Daemon, _ extra: [String] = []) throws -> [String: Any] {
    let result = try runTool("otactl", ["info", "--device", daemon.socket, "--json"] + extra)
    return try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any] ?? [:]
  }

  @Test func theRunningConfirmedVersionIsNotSentAgainUnlessForced() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let image = try writeImage(testBytes(60_000, seed: 22), in: daemon)
    let first = try push(image, "2.0.0", to: daemon)
    #expect(first.status == 0, "\(first.output)\n\(first.errors)\n\(daemon.log)")

    let again = try push(image, "2.0.0", to: daemon, ["--json"])
    #expect(again.status == 0, "\(again.output)\n\(again.errors)")
    #expect(result(again)["alreadyRunning"] as? Bool == true, "\(result(again))")
    #expect(result(again)["bytesSent"] as? Int == 0, "nothing was sent: \(result(again))")
    let plain = try push(image, "2.0.0", to: daemon)
    #expect(plain.status == 0 && plain.output.contains("already runs 2.0.0+0"), "\(plain.output)")
    #expect(plain.output.contains("--force"), "the message says how to send it anyway")
    #expect(try daemon.status().running == "B", "nothing moved")

    let forced = try push(image, "2.0.0", to: daemon, ["--force", "--json"])
    #expect(forced.status == 0, "\(forced.output)\n\(forced.errors)\n\(daemon.log)")
    #expect((result(forced)["bytesSent"] as? Int ?? 0) >= 60_000, "--force sends it all: \(result(forced))")
    #expect(try daemon.status().running == "A", "installed again, into the other slot")
    #expect(daemon.stop() == 0)
  }

  @Test func aRePushOfTheVersionOnTrialWaitsForItsVerdictAndConfirmSaysWhenThereIsNone() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: ["--confirm", "manual", "--confirm-timeout", "never"])
    let image = try writeImage(testBytes(40_000, seed: 23), in: daemon)
    let first = try push(image, "3.0.0", to: daemon, ["--trial-timeout", "1"])
    #expect(first.status == 7, "nobody confirmed it: \(first.output)\n\(first.errors)\n\(daemon.log)")
    #expect(try daemon.status().onTrial == true)

    // Before: PREPARE refused, exit 9. Now the push waits for the trial it finds, and times out as
    // a push that activated it itself would.
    let waiting = try push(image, "3.0.0", to: daemon, ["--trial-timeout", "1", "--json"])
    #expect(waiting.status == 7, "\(waiting.output)\n\(waiting.errors)")
    #expect((result(waiting)["error"] as? String ?? "").contains("nobody confirmed"), "\(result(waiting))")
    #expect(!daemon.log.contains("PREPARE answered"), "no PREPARE was refused: \(daemon.log)")

    let confirming = try push(image, "3.0.0", to: daemon, ["--confirm", "--json"])
    #expect(confirming.status == 0, "\(confirming.output)\n\(confirming.errors)\n\(daemon.log)")
    #expect(result(confirming)["joinedTrial"] as? Bool == true, "\(result(confirming))")
    #expect(result(confirming)["confirmed"] as? Bool == true && result(confirming)["bytesSent"] as? Int == 0)
    let status = try daemon.status()
    #expect(status.onTrial == false && status.confirmed == "B")

    // Nothing on trial any more: confirm sends nothing and says what runs.
    let confirmsBefore = daemon.log.components(separatedBy: "CONFIRM").count
    let nothing = try runTool("otactl", ["confirm", "--device", daemon.socket])
    #expect(nothing.status == 0, "\(nothing.output)\n\(nothing.errors)")
    #expect(
      nothing.output.contains("nothing to confirm") && nothing.output.contains("3.0.0+0"), "\(nothing.output)"
    )
    #expect(!nothing.output.contains("success"), "\(nothing.output)")
    #expect(
      daemon.log.components(separatedBy: "CONFIRM").count == confirmsBefore,
      "no CONFIRM reached the device: \(daemon.log)")
    #expect(daemon.stop() == 0)
  }

  @Test func confirmAfterARollbackSaysSoAndExits7() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: ["--confirm", "manual", "--confirm-timeout", "1s", "--attempts", "1"])
    let image = try writeImage(testBytes(30_000, seed: 24), in: daemon)
    let pushed = try push(image, "4.0.0", to: daemon, ["--trial-timeout", "60"])
    #expect(pushed.status == 7, "rolled back: \(pushed.output)\n\(pushed.errors)\n\(daemon.log)")
    let confirm = try runTool("otactl", ["confirm", "--device", daemon.socket, "--json"])
    #expect(confirm.status == 7, "\(confirm.output)\n\(confirm.errors)")
    let object = try JSONSerialization.jsonObject(with: Data(confirm.output.utf8)) as? [String: Any] ?? [:]
    #expect(object["sent"] as? Bool == false && object["ok"] as? Bool == false, "\(object)")
    #expect((object["message"] as? String ?? "").contains("rolled back"), "\(object)")
    #expect(daemon.stop() == 0)
  }

  @Test func activateRefusingTheImageExits6LikeValidate() throws {
    // [P-PHASE-8]
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let bytes = testBytes(20_000, seed: 25)
    let image = try writeImage(bytes, in: daemon)
    let validated = try push(image, "5.0.0", to: daemon, ["--no-activate"])
    #expect(validated.status == 0, "\(validated.errors)")
    // The slot changes behind the validated transfer: ACTIVATE checks again and answers 0x06.
    let handle = try FileHandle(forWritingTo: daemon.slotB)
    try handle.seek(toOffset: 100)
    try handle.write(contentsOf: Data([bytes[100] ^ 0xFF]))
    try handle.close()
    let activated = try push(image, "5.0.0", to: daemon)
    #expect(activated.status == 6, "\(activated.output)\n\(activated.errors)\n\(daemon.log)")
    #expect(activated.errors.contains("validation failed"), "\(activated.errors)")
    #expect(try daemon.status().running == "A", "nothing was activated")
    #expect(daemon.stop() == 0)
  }

  /// PROTOCOL.md, Info: max chunk payload at the reading central's MTU from its first read.
  @Test func infoGivesTheChunkSizeForTheMTUOfItsFirstRead() throws {
    // [P-INFO-13]
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    #expect(try info(daemon, ["--link", "mtu=185"])["maxChunkPayload"] as? Int == 178)
    #expect(try info(daemon, ["--link", "mtu=517"])["maxChunkPayload"] as? Int == 506)
    #expect(try info(daemon)["chunksDropped"] as? Int == 0)
    #expect(daemon.stop() == 0)
  }
}
