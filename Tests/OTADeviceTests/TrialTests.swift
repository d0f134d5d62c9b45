import OTABoot
import OTALink
import OTASender
import OTASimulation
import OTASocketLink
import OTAStorage
import OTAWire
import Testing

/// The A/B trial end to end over the in-memory link: the boot stage, the health check's verdict,
/// CONFIRM from the central, and what the bootloader is told at each step.
@Suite struct TrialTests {
  static let v2 = Version(major: 2, minor: 0, revision: 0)
  static let image = DeviceFixture.image(size: 5000, seed: 9)

  @Test func aTrialThatPassesIsConfirmedAndReported() throws {
    let fixture = DeviceFixture(slotCapacity: 8192)
    let run = try fixture.push(Self.image, version: Self.v2, conditions: LinkConditions(mtu: 247), seed: 1)
    let report = try #require(run.report)
    let after = try #require(report.deviceAfter)
    #expect(
      after.runningSlot == .b && after.runningVersion == Self.v2 && !after.flags.contains(.runningOnTrial))
    #expect(
      after.lastOutcome
        == UpdateOutcome(
          result: .succeeded, from: DeviceFixture.runningVersion, to: Self.v2, reason: .none, attemptsUsed: 1)
    )
    #expect(after.inactiveSlotContent == .good, "slot A is kept as the fallback")
    #expect(
      fixture.bootloader.appliedPlans == [
        BootPlan(primary: .a), BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 3)),
        BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 2)), BootPlan(primary: .b),
      ])
  }

  @Test func aTrialThatFailsItsHealthCheckRollsBackAndTheCentralSaysWhy() throws {
    // [P-PHASE-12]
    let fixture = DeviceFixture(slotCapacity: 8192)
    let run = try fixture.push(
      Self.image, version: Self.v2, conditions: LinkConditions(mtu: 247), seed: 2, verdict: .fails,
      expectSuccess: false)
    guard case .failed(let failure, let report) = run.result.outcome else {
      Issue.record("expected a failure, got \(String(describing: run.result.outcome))")
      return
    }
    #expect(failure == .rolledBack(running: DeviceFixture.runningVersion, reason: .healthCheckFailed))
    let after = try #require(report.deviceAfter)
    #expect(after.runningSlot == .a && after.inactiveSlotContent == .bad)
    #expect(after.lastOutcome.result == .rolledBack && after.lastOutcome.to == Self.v2)
    #expect(after.lastOutcome.attemptsUsed == 3, "the health check failed at each of the three boots")
    #expect(
      fixture.bootloader.appliedPlans == [
        BootPlan(primary: .a),
        BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 3)),
        BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 2)),
        BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 1)),
        BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 0)),
        BootPlan(primary: .a),
      ])
    #expect(fixture.runningSlotUntouched)
  }

  @Test func aCentralCanConfirmATrialItself() throws {
    // [P-REQ-7] [P-PHASE-11]
    let fixture = DeviceFixture(slotCapacity: 8192)
    let run = try fixture.push(
      Self.image, version: Self.v2, conditions: LinkConditions(mtu: 185), seed: 3,
      sender: SenderConfiguration(version: Self.v2, confirm: true), verdict: .silent)
    let after = try #require(run.report?.deviceAfter)
    #expect(after.runningVersion == Self.v2 && !after.flags.contains(.runningOnTrial))
    #expect(try fixture.control.current().confirmed == .b)
  }

  @Test func aTrialNobodyConfirmsIsNotASuccess() throws {
    // [P-PHASE-11]
    let fixture = DeviceFixture(slotCapacity: 8192)
    let run = try fixture.push(
      Self.image, version: Self.v2, conditions: LinkConditions(mtu: 185), seed: 4,
      sender: SenderConfiguration(version: Self.v2, trialTimeout: .seconds(20)), verdict: .silent,
      expectSuccess: false)
    guard case .failed(.notConfirmed(let version, _), let report) = run.result.outcome else {
      Issue.record("expected notConfirmed, got \(String(describing: run.result.outcome))")
      return
    }
    #expect(version == Self.v2)
    #expect(report.deviceAfter?.flags.contains(.runningOnTrial) == true)
    #expect(run.result.elapsed >= .seconds(20))
  }

  /// Pushes the image and leaves its trial running undecided; the central stops waiting after 2 s.
  func pushLeavingATrial(to fixture: DeviceFixture, seed: UInt64) throws {
    _ = try fixture.push(
      Self.image, version: Self.v2, conditions: LinkConditions(mtu: 185), seed: seed,
      sender: SenderConfiguration(version: Self.v2, trialTimeout: .seconds(2)), verdict: .silent,
      expectSuccess: false)
  }

  @Test func aTrialWithoutAVerdictRollsBackWhenItsBootsAreSpent() throws {
    var fixture = DeviceFixture(slotCapacity: 8192)
    fixture.attempts = 2
    try pushLeavingATrial(to: fixture, seed: 5)
    // Boot 1 of 2 ran during the push; two more starts without a verdict: the second rolls back.
    var host = try fixture.boot(verdict: .silent)
    #expect(host.running == .b && host.runningOnTrial && host.boot.trial?.attemptsLeft == 0)
    host = try fixture.boot(verdict: .silent)
    #expect(host.running == .a && !host.runningOnTrial)
    #expect(
      host.info().lastOutcome
        == UpdateOutcome(
          result: .rolledBack, from: DeviceFixture.runningVersion, to: Self.v2, reason: .didNotStart,
          attemptsUsed: 2))
  }

  @Test func prepareIsRefusedWhileATrialRunsAndTakenOnceItIsConfirmed() throws {
    // [P-PREP-2] [SEC-CHECK-3]
    let fixture = DeviceFixture(slotCapacity: 8192)
    try pushLeavingATrial(to: fixture, seed: 6)
    var host = try fixture.boot(verdict: .silent)
    let prepare = Request.prepare(size: 10, crc32: 0, version: Self.v2).encoded
    _ = try host.handle(.connected(mtu: 185))
    #expect(
      try host.handle(.control(prepare, now: .zero)) == [.notify(Response(.prepare, .invalidState).encoded)])
    // `otad mark-good` from another process, then SIGHUP: the daemon reloads and takes PREPARE.
    try fixture.control.update { $0.markGood() }
    #expect(try host.reloadBootState())
    let outputs = try host.handle(.control(prepare, now: .zero))
    guard case .notify(let bytes) = outputs.first else {
      Issue.record("no answer")
      return
    }
    #expect(try Response(bytes: bytes).status == .success)
  }

  @Test func markBadFromOutsideMakesTheDaemonRestart() throws {
    let fixture = DeviceFixture(slotCapacity: 8192)
    try pushLeavingATrial(to: fixture, seed: 7)
    var host = try fixture.boot(verdict: .silent)
    #expect(host.runningOnTrial)
    try fixture.control.update { $0.markBad(.markedBad) }
    #expect(try host.reloadBootState() == false, "the state no longer wants slot B: restart")
    let next = try fixture.boot(verdict: .silent)
    #expect(next.running == .a && next.info().lastOutcome.reason == .markedBad)
  }
}
