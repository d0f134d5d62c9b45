import Foundation
import OTAReport
import Testing

/// Faults on demand (docs/APP-TESTING.md) against a real MCUmgr client, smpmgr over UDP on
/// loopback: what it does when the device misbehaves, and the device on a good image after each.
@Suite(.serialized) struct SMPFaultProcessTests {
  static func sample(_ name: String) -> String { TrialBootProcessTests.sample(name) }

  func device(_ address: String, faults: [String]) throws -> Daemon {
    let factory = try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v1.bin")))
    let daemon = try Daemon(capacity: "64KiB", firmware: [UInt8](factory))
    try daemon.start(
      extra: [
        "--smp-udp", "\(address):1337", "--health-check", TrialBootProcessTests.healthCheck, "--attempts",
        "1",
        "--factory-version", "1.0.0", "--allow-faults",
      ] + faults.flatMap { ["--fault", $0] })
    return daemon
  }

  func upgrade(_ address: String, _ image: String = "firmware-v2.bin") throws -> SMPResult {
    try SMPManager.locate().run([
      "--ip", address, "--timeout", "2", "upgrade", "--slot", "1", Self.sample(image),
    ])
  }

  func outcome(_ daemon: Daemon, _ expected: String) throws -> DeviceStatusReport {
    try daemon.waitForStatus { $0.lastOutcome.result == expected }
  }

  /// smpmgr does not send a piece again: it waits its timeout and gives up. Run again, it uploads
  /// from the start and the device takes it.
  @Test func aLostUploadPieceFailsSMPMgrAndItsNextRunCompletes() throws {
    let daemon = try device("127.0.0.61", faults: ["lose-chunk after=30%"])
    let lost = try upgrade("127.0.0.61")
    #expect(lost.status == 1 && lost.output.contains("Connection to device lost"), "\(lost.output)")
    #expect(daemon.log.contains("fault 1 fired (1 of 1): lose-chunk after=30% times=1"), "\(daemon.log)")
    let again = try upgrade("127.0.0.61")
    #expect(again.status == 0, "\(again.output)\n\(daemon.log)")
    let status = try daemon.waitForStatus { $0.confirmed == "B" }
    #expect(status.running == "B", "\(daemon.log)")
  }

  @Test func aCorruptedUploadIsRefusedAndTheDeviceKeepsItsImage() throws {
    let daemon = try device("127.0.0.62", faults: ["corrupt-chunk after=50%"])
    let upgrade = try upgrade("127.0.0.62")
    #expect(upgrade.status == 1 && upgrade.output.contains("SMPUploadError"), "\(upgrade.output)")
    #expect(daemon.log.contains("corrupt-chunk after=50% times=1"), "\(daemon.log)")
    let status = try daemon.status()
    #expect(status.running == "A" && status.confirmed == "A", "\(daemon.log)")
  }

  @Test func aRefusedUploadFailsSMPMgrAndAClearedOneSucceeds() throws {
    let daemon = try device("127.0.0.63", faults: ["refuse at=smp-upload rc=10 after=40%"])
    let refused = try upgrade("127.0.0.63")
    #expect(refused.status == 1 && refused.output.contains("rc=10"), "\(refused.output)")
    let again = try upgrade("127.0.0.63")
    #expect(again.status == 0, "the fault fired once: \(again.output)\n\(daemon.log)")
  }

  @Test func aFailedHealthCheckRollsTheSMPUpgradeBack() throws {
    let daemon = try device("127.0.0.64", faults: ["fail-health-check"])
    // smpmgr reports success: it does not look at the device after the reset. The device rolled back.
    let upgrade = try upgrade("127.0.0.64")
    #expect(upgrade.status == 0, "\(upgrade.output)")
    let status = try outcome(daemon, "rolled back")
    #expect(status.running == "A", "\(daemon.log)")
    #expect(status.lastOutcome.reason == "health check failed")
  }

  /// Over UDP a dropped link is a lost request: smpmgr times out on the reset and fails; the image
  /// waits, marked for test, and a reset asked again starts its trial.
  @Test func aLostResetFailsSMPMgrAndTheNextResetStartsTheTrial() throws {
    let daemon = try device("127.0.0.65", faults: ["drop-link at=smp-reset", "delay by=1s at=smp-state"])
    let upgrade = try upgrade("127.0.0.65")
    #expect(upgrade.status == 1 && upgrade.output.contains("Timeout"), "\(upgrade.output)")
    #expect(daemon.log.contains("fault 1 fired (1 of 1): drop-link at=smp-reset times=1"), "\(daemon.log)")
    #expect(daemon.log.contains("fault 2 fired (1 of 1): delay by=1s at=smp-state times=1"))
    #expect(try daemon.status().running == "A")
    let reset = try SMPManager.locate().run(["--ip", "127.0.0.65", "os", "reset"])
    #expect(reset.status == 0, "\(reset.output)")
    let status = try daemon.waitForStatus { $0.confirmed == "B" }
    #expect(status.running == "B", "\(daemon.log)")
  }
}
