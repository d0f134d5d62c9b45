import Foundation
import OTAReport
import OTATestSupport
import Testing

/// The device's say with the real binaries (issue 47): a push to a locked device ends "deferred"
/// with the image validated and nothing activated; the lock released, the device activates on its
/// own; with consent required, `otad consent` decides; a security update goes ahead once its
/// maximum deferral has passed, lock or not; the owner's notify command hears each change.
@Suite(.serialized) struct DeviceSayProcessTests {
  static var healthCheck: String { TrialBootProcessTests.healthCheck }

  func device() throws -> Daemon {
    let factory = try Data(contentsOf: URL(fileURLWithPath: TrialBootProcessTests.sample("firmware-v1.bin")))
    return try Daemon(capacity: "64KiB", firmware: [UInt8](factory))
  }

  func push(_ image: String, to daemon: Daemon, _ extra: [String] = []) throws -> CommandResult {
    try runTool(
      "otactl",
      ["push", image, "--device", daemon.socket, "--link", "mtu=247,interval=2ms,packets=8", "--json"] + extra
    )
  }

  func activation(_ status: DeviceStatusReport) -> ActivationStatus? { status.activation }
  func kept(_ status: DeviceStatusReport) -> ActivationStatus.Kept? { status.activation?.kept }

  /// A lock file naming this test's own process (alive while the test runs; a second process of
  /// Foundation's would keep the test's waits on its children waiting for it). Returns its path:
  /// removing the file releases the lock.
  func holdLock(in directory: URL, reason: String) throws -> URL {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appendingPathComponent("job.lock")
    try Data("pid=\(getpid())\nreason=\(reason)\n".utf8).write(to: file)
    return file
  }

  @Test func aLockedDeviceKeepsTheImageAndActivatesItOnceTheLockIsGone() throws {
    let daemon = try device()
    let locks = daemon.folder.appendingPathComponent("locks")
    let lock = try holdLock(in: locks, reason: "printing job 17")
    try daemon.start(extra: ["--health-check", Self.healthCheck, "--lock-dir", locks.path])

    let pushed = try push(TrialBootProcessTests.sample("firmware-v2.bin"), to: daemon)
    #expect(pushed.status == 16, "deferred: \(pushed.output)\n\(pushed.errors)")
    let line = pushed.jsonLines.last { $0["event"] as? String == "result" } ?? [:]
    let held = line["activation"] as? [String: Any] ?? [:]
    #expect(held["hold"] as? String == "locked" && held["kept"] as? Bool == true, "\(line)")
    let waiting = try daemon.status()
    #expect(waiting.running == "A", "nothing activated")
    #expect(waiting.journal?.state == "validated", "\(waiting)")
    #expect(kept(waiting)?.hold == "an update lock", "\(waiting)")
    #expect(kept(waiting)?.detail.contains("printing job 17") == true)

    try FileManager.default.removeItem(at: lock)
    let after = try daemon.waitForStatus {
      $0.running == "B" && $0.onTrial == false
    }
    #expect(after.confirmed == "B", "activated by the device itself, then confirmed: \(after)")
    #expect(kept(after) == nil)
    #expect(
      daemon.log.contains("the kept activation of 2.0.0+0 was carried out"), "\(daemon.log.suffix(2000))")
    #expect(daemon.stop() == 0)
  }

  @Test func consentDecidesAndTheApplicationIsToldOfEachChange() throws {
    let daemon = try device()
    let notes = daemon.folder.appendingPathComponent("notes")
    try daemon.start(extra: [
      "--health-check", Self.healthCheck, "--lock-dir", daemon.folder.appendingPathComponent("locks").path,
      "--require-consent", "--activation-notify",
      "echo \"$OTAD_ACTIVATION $OTAD_HOLD $OTAD_VERSION\" >> \(notes.path)",
    ])
    let pushed = try push(TrialBootProcessTests.sample("firmware-v2.bin"), to: daemon)
    #expect(pushed.status == 16, "\(pushed.errors)")
    // otad status needs none of the daemon's flags to weigh it as the daemon does.
    let waiting = try daemon.waitForStatus { kept($0)?.hold == "awaiting consent" }
    #expect(activation(waiting)?.consentRequired == true, "\(waiting)")
    try waitFor {
      ((try? String(contentsOf: notes, encoding: .utf8)) ?? "").contains("held awaiting-consent 2.0.0+0")
    }

    let accepted = try runTool("otad", ["consent", "accept"] + daemon.storageArguments)
    #expect(accepted.status == 0, "\(accepted.errors)")
    let after = try daemon.waitForStatus {
      $0.running == "B" && $0.onTrial == false
    }
    #expect(after.confirmed == "B", "\(after)")
    let told = (try? String(contentsOf: notes, encoding: .utf8)) ?? ""
    #expect(told.contains("activating none 2.0.0+0"), "\(told)")

    // v3 declined: the push is told so (exit 17) and the device drops it.
    _ = try runTool("otad", ["consent", "decline", "--image-version", "3.0.0"] + daemon.storageArguments)
    let declined = try push(TrialBootProcessTests.sample("firmware-v3.bin"), to: daemon)
    #expect(declined.status == 17, "\(declined.output)\n\(declined.errors)")
    let dropped = try daemon.status()
    #expect(
      dropped.running == "B" && dropped.transfer == .missing, "\(dropped)")
    #expect(daemon.stop() == 0)
  }

  @Test func aSecurityUpdateGoesAheadOnceItsMaximumDeferralHasPassed() throws {
    let daemon = try device()
    let locks = daemon.folder.appendingPathComponent("locks")
    let lock = try holdLock(in: locks, reason: "never lets go")
    // v2 with a security counter above v1's (which has none): a security update.
    let payload = daemon.folder.appendingPathComponent("app.bin")
    try Data(testBytes(6000, seed: 47)).write(to: payload)
    let image = daemon.folder.appendingPathComponent("security.img").path
    let made = try runTool(
      "otactl",
      ["image", "create", payload.path, image, "--version", "2.0.0", "--security-counter", "2"])
    #expect(made.status == 0, "\(made.errors)")
    try daemon.start(extra: ["--lock-dir", locks.path, "--max-deferral", "3s", "--confirm", "auto"])

    let pushed = try push(image, to: daemon, ["--full"])
    #expect(pushed.status == 16, "held at first: \(pushed.errors)")
    let after = try daemon.waitForStatus { $0.running == "B" }
    #expect(after.running == "B", "the lock still held, and it went ahead: \(after)")
    #expect(FileManager.default.fileExists(atPath: lock.path), "the lock was never released")
    #expect(
      daemon.log.contains("a security update is held at most the maximum deferral"),
      "\(daemon.log.suffix(2000))")
    #expect(daemon.stop() == 0)
  }

  @Test func inhibitHoldsALockForItsCommandsLifeAndNoLonger() throws {
    let daemon = try device()
    let locks = daemon.folder.appendingPathComponent("locks").path
    // The command sees its own lock; once it has ended the lock is gone, and its exit status is otad's.
    let held = try runTool(
      "otad",
      [
        "inhibit", "--why", "printing job 17", "--who", "printer", "--lock-dir", locks, "--", "/bin/sh", "-c",
        "cat \(locks)/printer.lock; exit 3",
      ])
    #expect(held.status == 3, "\(held.errors)")
    #expect(held.output.contains("reason=printing job 17") && held.output.contains("pid="), "\(held.output)")
    #expect(!FileManager.default.fileExists(atPath: "\(locks)/printer.lock"))
    let empty = try runTool("otad", ["inhibit", "--why", "x", "--lock-dir", locks])
    #expect(
      empty.status == 64 && empty.errors.contains("give the command to run after --"), "\(empty.errors)")
  }

  /// Polls `done` for up to 10 s.
  func waitFor(_ done: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(10)
    while !done(), Date() < deadline { usleep(50_000) }
    #expect(done())
  }
}
