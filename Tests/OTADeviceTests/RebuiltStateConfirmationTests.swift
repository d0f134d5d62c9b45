import OTABoot
import OTADaemon
import OTAReceiverHost
import OTASocketLink
import OTAStorage
import OTAWire
import Testing

/// A boot state rebuilt without knowing which slot is good (provisional) needs no one at the
/// device's console: its running slot proves itself as a trial does, or a central the link
/// authenticates confirms it. [P-PREP-3]
@Suite struct RebuiltStateConfirmationTests {
  static let v2 = Version(major: 2, minor: 0, revision: 0)

  /// v2 confirmed in slot B by a bootloader that tells only the slot it starts, then both copies of
  /// the boot state lost: the rebuild keeps B, provisionally.
  static func provisionalDevice() throws -> DeviceFixture {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024, bootloaderReportsPrimary: false)
    _ = try fixture.boot()
    let image = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    _ = try fixture.push(image, version: v2, conditions: LinkConditions(mtu: 247), seed: 1)
    for name in [BootState.recordName, BootStateStore.copyName] {
      try fixture.medium.remove(name)
    }
    return fixture
  }

  func host(_ fixture: DeviceFixture, pairingRequired: Bool) throws -> ReceiverHost {
    let decision = try fixture.control.runBootStage()
    #expect(decision.state.provisional && decision.run == .b)
    var host = try ReceiverHost(
      storage: fixture.storage, control: fixture.control, running: decision.run,
      windowCapacity: fixture.windowCapacity, imageCheck: .standard(fixture.policy),
      pairingRequired: pairingRequired)
    _ = try host.handle(.connected(mtu: 247))
    return host
  }

  func confirm(_ host: inout ReceiverHost) throws -> [[UInt8]] {
    try host.handle(.control([0x07], now: .seconds(1))).compactMap { output in
      if case .notify(let bytes) = output { bytes } else { nil }
    }
  }

  @Test func aPairedCentralsConfirmSavesTheRebuiltState() throws {
    let fixture = try Self.provisionalDevice()
    var host = try host(fixture, pairingRequired: true)
    #expect(host.info().flags.contains(.bootStateRebuilt))
    #expect(try confirm(&host) == [[0x60, 0x07, 0x00]])
    #expect(!host.boot.provisional && !host.info().flags.contains(.bootStateRebuilt))
    #expect(try fixture.control.current().provisional == false, "saved: the next start is no rebuild")
    #expect(try fixture.control.runBootStage().reading?.recovery == nil)
  }

  @Test func anUnauthenticatedCentralsConfirmIsRefusedAndChangesNothing() throws {
    let fixture = try Self.provisionalDevice()
    var host = try host(fixture, pairingRequired: false)
    #expect(try confirm(&host) == [[0x60, 0x07, 0x03]])
    #expect(host.boot.provisional && host.info().flags.contains(.bootStateRebuilt))
    #expect(try fixture.control.runBootStage().state.provisional, "nothing saved")
  }

  @Test func theRunningSlotsHealthCheckConfirmsTheRebuiltStateAndUpdatesGoOn() throws {
    let fixture = try Self.provisionalDevice()
    // The daemon's start: the health check passes (DeviceFixture models it as TrialSupervisor does).
    let host = try fixture.boot(verdict: .passes)
    #expect(!host.boot.provisional && host.running == .b)
    let image = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
    let run = try fixture.push(
      image, version: Version(major: 3, minor: 0, revision: 0), conditions: LinkConditions(mtu: 247), seed: 2,
      verdict: .silent, expectSuccess: false)
    #expect(
      fixture.medium.slotBytes(.a).starts(with: image), "the update went to slot A: \(run.result.outcome)")
  }
}

/// The supervisor's part, pure: the running slot of a provisional state is checked as a trial is,
/// but a failure is no failed boot and no restart (there is nothing known-good to go back to).
@Suite struct RebuiltStateSupervisorTests {
  @Test func aHealthCheckThatFailsOrHangsLeavesTheStateProvisionalWithoutARestart() {
    let policy = TrialPolicy(healthCheck: "check", healthTimeout: .seconds(60), confirmTimeout: .seconds(600))
    var failing = TrialSupervisor(policy: policy, subject: .rebuiltState)
    #expect(failing.start(now: .zero) == [.startHealthCheck])
    #expect(
      failing.healthCheckEnded(passed: false, "exit 1") == [
        .stayProvisional("the health check failed (exit 1)")
      ])
    #expect(failing.finished && failing.nextDeadline == nil)

    var hanging = TrialSupervisor(policy: policy, subject: .rebuiltState)
    _ = hanging.start(now: .zero)
    #expect(
      hanging.tick(now: .seconds(61)) == [
        .stopHealthCheck, .stayProvisional("the health check did not finish within 60.0 seconds"),
      ])

    var passing = TrialSupervisor(policy: policy, subject: .rebuiltState)
    _ = passing.start(now: .zero)
    #expect(passing.healthCheckEnded(passed: true, "exit 0") == [.markGood])
  }

  @Test func withoutAHealthCheckAutoConfirmsAndManualWaitsWithoutADeadline() {
    var auto = TrialSupervisor(policy: TrialPolicy(), subject: .rebuiltState)
    #expect(auto.start(now: .zero) == [.markGood])
    var manual = TrialSupervisor(
      policy: TrialPolicy(manual: true, confirmTimeout: .seconds(600)), subject: .rebuiltState)
    #expect(manual.start(now: .zero) == [])
    #expect(manual.nextDeadline == nil && manual.tick(now: .seconds(3600)) == [])
    var trial = TrialSupervisor(policy: TrialPolicy(manual: true, confirmTimeout: .seconds(600)))
    _ = trial.start(now: .zero)
    #expect(trial.nextDeadline == .seconds(600), "a trial keeps its deadline")
  }
}

/// What `BootControl.abandonProvisional` decides, on the simulated medium.
@Suite struct ProvisionalFallbackTests {
  @Test func aRawImageInTheOtherSlotIsNotWorthATryAndTheFailureIsRemembered() throws {
    let fixture = try RebuiltStateConfirmationTests.provisionalDevice()
    _ = try fixture.control.runBootStage()
    // Slot A holds the factory's raw image: nothing verifies it, so B stays.
    #expect(try fixture.control.abandonProvisional(.b) == nil)
    #expect(try fixture.medium.load(BootStateStore.provisionalName) == [1, 2, 2])
    #expect(fixture.bootloader.appliedPlans.last?.primary == .b)
  }
}
