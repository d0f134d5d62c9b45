import Foundation
import OTAReport
import OTATestSupport
import Testing

/// The A/B trial with two real processes: the sample firmware's health check decides, otad restarts
/// itself (re-exec) into the trial and back, and otactl reports success only for a confirmed image.
@Suite(.serialized) struct TrialBootProcessTests {
  static let root = RepositoryRoot.url

  static func sample(_ name: String) -> String { root.appendingPathComponent("Images/\(name)").path }

  static var healthCheck: String { "sh " + sample("firmware/health-check.sh") }

  /// A device whose slot A holds the sample firmware 1.0.0.
  func device() throws -> Daemon {
    let factory = try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v1.bin")))
    return try Daemon(capacity: "64KiB", firmware: [UInt8](factory))
  }

  func push(_ image: String, to daemon: Daemon, _ extra: [String] = []) throws -> CommandResult {
    try runTool(
      "otactl",
      [
        "push", Self.sample(image), "--device", daemon.socket, "--link", "mtu=247,interval=2ms,packets=8",
        "--json",
      ]
        + extra)
  }

  func result(_ command: CommandResult) -> [String: Any] {
    command.jsonLines.last { $0["event"] as? String == "result" } ?? [:]
  }

  /// A device whose restart takes 4 s (its restart command sleeps, then otad re-executes): a push
  /// that waits 1 s for it fails as "stopped answering" (exit 8), one that waits the default 60 s
  /// sees the trial through. Found by the GRUB test, whose reboots under emulation outlast 60 s.
  @Test func theRestartTimeoutIsHowLongThePushWaitsForTheDeviceToComeBack() throws {
    let daemon = try device()
    try daemon.start(extra: ["--health-check", Self.healthCheck, "--restart", "sleep 4"])
    let impatient = try push("firmware-v2.bin", to: daemon, ["--restart-timeout", "1"])
    #expect(impatient.status == 8, "\(impatient.output)\n\(impatient.errors)")
    let status = try daemon.waitForStatus {
      $0.onTrial == false && $0.running == "B"
    }
    #expect(status.confirmed == "B", "the device went on to its verdict: \(status)")

    let patient = try push("firmware-v3.bin", to: daemon)
    #expect(patient.status == 7, "waited through the slow restarts to the rollback: \(patient.errors)")
    #expect(daemon.stop() == 0)
  }

  /// Issue 48: the lab showed "bytes on air 0.0 KiB" after a push that sent 40 KiB, because every
  /// progress line after the transfer (VALIDATE, ACTIVATE, the trial) said `bytesOnAir: 0`.
  @Test func everyProgressLineCarriesTheBytesOnAirSoFar() throws {
    let daemon = try device()
    try daemon.start(extra: ["--health-check", Self.healthCheck])
    let pushed = try push("firmware-v2.bin", to: daemon, ["--full"])
    #expect(pushed.status == 0, "\(pushed.errors)")
    let onAir = pushed.jsonLines.filter { $0["event"] as? String == "progress" }
      .compactMap { $0["bytesOnAir"] as? Int }
    #expect(onAir.count >= 3, "progress lines: \(onAir)")
    #expect(onAir == onAir.sorted(), "never falls back: \(onAir)")
    let sent = result(pushed)["bytesOnAir"] as? Int ?? 0
    #expect(
      sent >= 41_686 && onAir.last == sent,
      "the last progress line says what the result says: \(onAir.suffix(3)), \(sent)")
    #expect(daemon.stop() == 0)
  }

  @Test func v2PassesItsHealthCheckAndV3FailsItAndRollsBackToV2() throws {
    let daemon = try device()
    try daemon.start(extra: [
      "--health-check", Self.healthCheck, "--attempts", "2", "--factory-version", "1.0.0",
    ])

    let toV2 = try push("firmware-v2.bin", to: daemon)
    #expect(toV2.status == 0, "\(toV2.output)\n\(toV2.errors)\n\(daemon.log)")
    #expect(
      result(toV2)["runningVersion"] as? String == "2.0.0+0" && result(toV2)["confirmed"] as? Bool == true)
    var status = try daemon.status()
    #expect(status.confirmed == "B" && status.onTrial == false)
    let succeeded = status.lastOutcome
    #expect(succeeded.result == "succeeded" && succeeded.to == "2.0.0+0")
    #expect(succeeded.attemptsUsed == 1)
    let link = daemon.folder.appendingPathComponent("state/current").path
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == daemon.slotB.path)

    let toV3 = try push("firmware-v3.bin", to: daemon)
    #expect(toV3.status == 7, "a rollback fails the push: \(toV3.output)\n\(toV3.errors)\n\(daemon.log)")
    #expect((result(toV3)["error"] as? String ?? "").contains("health check failed"), "\(result(toV3))")
    status = try daemon.status()
    #expect(status.running == "B" && status.confirmed == "B")
    #expect(status.slot("B")?.version == "2.0.0+0")
    #expect(
      status.slot("A")?.status == "bad" && status.slot("A")?.version == "3.0.0+0")
    let rolledBack = status.lastOutcome
    #expect(
      rolledBack.result == "rolled back"
        && rolledBack.reason == "health check failed")
    #expect(rolledBack.from == "2.0.0+0" && rolledBack.to == "3.0.0+0")
    #expect(rolledBack.attemptsUsed == 2, "both configured boots were tried")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == daemon.slotB.path)
    #expect(daemon.log.contains("the sensor bus does not answer"), "the health check ran v3's self-test")
    #expect(daemon.stop() == 0)
  }

  @Test func aTrialNobodyConfirmsRollsBackByItself() throws {
    let daemon = try device()
    try daemon.start(extra: ["--confirm", "manual", "--confirm-timeout", "1s", "--attempts", "2"])
    let pushed = try push("firmware-v2.bin", to: daemon, ["--trial-timeout", "60"])
    #expect(pushed.status == 7, "\(pushed.output)\n\(pushed.errors)\n\(daemon.log)")
    #expect((result(pushed)["error"] as? String ?? "").contains("did not start"), "\(result(pushed))")
    let status = try daemon.status()
    #expect(status.running == "A" && status.slot("B")?.status == "bad")
    let outcome = status.lastOutcome
    #expect(outcome.reason == "did not start" && outcome.attemptsUsed == 2)
    #expect(daemon.stop() == 0)
  }

  @Test func markGoodBesideTheDaemonConfirmsTheTrialItRuns() throws {
    let daemon = try device()
    // --allow-downgrade: the second push below goes back to v1.
    try daemon.start(extra: ["--confirm", "manual", "--confirm-timeout", "never", "--allow-downgrade"])
    let pushed = try push("firmware-v2.bin", to: daemon, ["--trial-timeout", "1"])
    #expect(pushed.status == 7 && (result(pushed)["error"] as? String ?? "").contains("nobody confirmed"))
    #expect(try daemon.status().onTrial == true)

    let marked = try runTool("otad", ["mark-good"] + daemon.storageArguments)
    #expect(
      marked.status == 0 && marked.output.contains("confirmed")
        && marked.output.contains("told the running otad"))
    // The daemon reloaded (SIGHUP): Info over the link says so, and PREPARE is taken again.
    let info = try runTool("otactl", ["info", "--device", daemon.socket, "--json"])
    let object = try JSONSerialization.jsonObject(with: Data(info.output.utf8)) as? [String: Any] ?? [:]
    #expect(
      object["onTrial"] as? Bool == false && object["runningVersion"] as? String == "2.0.0+0", "\(object)")
    let again = try push("firmware-v1.bin", to: daemon, ["--confirm"])
    #expect(again.status == 0, "a push after mark-good: \(again.output)\n\(again.errors)")

    let notOnTrial = try runTool("otad", ["mark-bad"] + daemon.storageArguments)
    #expect(notOnTrial.status != 0 && notOnTrial.errors.contains("no slot is on trial"))
    #expect(daemon.stop() == 0)
  }
}
