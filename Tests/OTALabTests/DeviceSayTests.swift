import Foundation
import OTALab
import OTAReport
import Testing

/// The device's say as the page draws it, and exercise 10's steps, from `otad status`'s reports.
@Suite struct DeviceSayTests {
  static let lock = ActivationStatus.Lock(
    holder: "lab", state: "holding", reason: "the lab's device is busy printing", pid: 4242, until: nil)

  static func kept(
    _ version: String = "2.0.0+0", hold: String, notBefore: Int64? = nil, notAfter: Int64? = nil
  )
    -> ActivationStatus.Kept
  {
    ActivationStatus.Kept(
      version: version, kind: "trial", notBefore: notBefore, notAfter: notAfter, firstHeld: 1_764_480_000,
      security: false, hold: hold, detail: "lab holds an update lock: the lab's device is busy printing")
  }

  static func activation(
    consent: Bool = false, locks: [ActivationStatus.Lock] = [], kept: ActivationStatus.Kept? = nil,
    answer: ActivationStatus.Consent? = nil
  ) -> ActivationStatus {
    ActivationStatus(
      consentRequired: consent, maxDeferral: 604_800, lockDirectory: "/tmp/lab/locks", locks: locks,
      kept: kept,
      consent: answer)
  }

  static func report(running: String = "A", version: String = "1.0.0+0", _ activation: ActivationStatus?)
    -> DeviceStatusReport
  {
    var report = DeviceStatusReport(
      running: running, confirmed: running, onTrial: false, bootloader: "file",
      slots: [
        .init(
          slot: running, running: true, confirmed: true, status: "good", version: version, capacity: 1 << 20,
          path: "/x", securityCounter: 0)
      ],
      trial: nil, lastOutcome: .init(result: "none", from: "A", to: "A", reason: "", attemptsUsed: 0),
      bootState: "present", runningImage: nil, provisional: false, rebuilt: nil, securityFloor: 0,
      signaturesRequired: true, trustedKeys: [], downgradesAllowed: false, transfer: .missing)
    report.activation = activation
    return report
  }

  static func snapshot(_ report: DeviceStatusReport) -> LabSnapshot {
    LabSnapshot(
      at: 1, startedAt: 0, otadRunning: true, powerCuts: 0, status: report, statusError: nil,
      deviceEvents: DeviceEventDigest(), push: nil,
      link: .init(mtu: 247, intervalMilliseconds: 30, loss: 0, conditions: "mtu=247"), windowCapacity: 8192,
      actions: [])
  }

  @Test func theSnapshotCarriesTheLocksTheKeptActivationAndWhatHoldsIt() throws {
    let held = Self.activation(
      locks: [
        Self.lock,
        .init(holder: "old", state: "stale (its process 7 is gone)", reason: "x", pid: 7, until: nil),
      ],
      kept: Self.kept(hold: "an update lock", notBefore: 1_764_493_200, notAfter: 1_764_496_800))
    let say = try #require(Self.snapshot(Self.report(held)).say)
    #expect(!say.consentRequired && say.locked && say.answer == nil)
    #expect(
      say.locks.map(\.holder) == ["lab", "old"] && say.locks[0].reason == "the lab's device is busy printing")
    let kept = try #require(say.kept)
    #expect(kept.version == "2.0.0+0" && kept.kind == "trial" && kept.hold == "an update lock")
    #expect(kept.detail.contains("busy printing"))
    #expect(kept.window == "from 09:00:00 UTC to 10:00:00 UTC", "a window as clock times")

    let answered = Self.activation(
      consent: true, kept: Self.kept("3.0.0+0", hold: "postponed"),
      answer: .init(version: "3.0.0+0", decision: "postpone", until: 1_764_480_060, at: 1_764_480_000))
    let postponed = try #require(Self.snapshot(Self.report(answered)).say)
    #expect(postponed.consentRequired && !postponed.locked && postponed.kept?.window == nil)
    #expect(postponed.answer?.decision == "postpone" && postponed.answer?.until == "05:21:00 UTC")
  }

  @Test func aDeferredPushIsNotCalledFailed() {
    var push = PushProgress(label: "push v2")
    push.apply(
      .result(ok: false, exitCode: 16, error: "deferred: an update lock, ask again in 60 s", seconds: 3))
    #expect(push.phase == "deferred" && push.result?.ok == false && !push.running)
    push.apply(.result(ok: false, exitCode: 7, error: "rolled back", seconds: 3))
    #expect(push.phase == "failed")
  }

  @Test func aStatusWithoutTheDevicesSayLeavesItOut() {
    #expect(Self.snapshot(Self.report(nil)).say == nil)
  }

  @Test func theSnapshotStaysSmallWithTheSay() throws {
    let held = Self.activation(locks: [Self.lock], kept: Self.kept(hold: "an update lock"))
    let say = try #require(Self.snapshot(Self.report(held)).say)
    let json = try JSONEncoder().encode(say)
    #expect(json.count < 600, "a few strings beside the status report: \(json.count) bytes")
  }
}

@Suite struct SayExerciseTests {
  typealias Fixture = DeviceSayTests

  static func say(_ activation: ActivationStatus) -> DeviceSay { DeviceSay(activation) }

  @Test func heldByALockThenActivatedOnItsOwnThenDeclinedIsDone() {
    var exercise = SayExercise()
    #expect(!exercise.underWay && !exercise.done)
    exercise.observe(Self.say(Fixture.activation(locks: [Fixture.lock])), running: "1.0.0+0", onTrial: false)
    #expect(!exercise.underWay, "a lock alone, with nothing to hold, begins nothing")
    let held = Fixture.activation(locks: [Fixture.lock], kept: Fixture.kept(hold: "an update lock"))
    exercise.observe(Self.say(held), running: "1.0.0+0", onTrial: false)
    #expect(exercise.heldVersion == "2.0.0+0" && exercise.underWay)
    // Released: the device activates it itself; the trial runs, then is confirmed.
    exercise.observe(Self.say(Fixture.activation()), running: "2.0.0+0", onTrial: true)
    #expect(!exercise.activatedOnItsOwn, "still on trial")
    exercise.observe(Self.say(Fixture.activation()), running: "2.0.0+0", onTrial: false)
    #expect(exercise.activatedOnItsOwn && exercise.underWay)
    exercise.observe(Self.say(Fixture.activation(consent: true)), running: "2.0.0+0", onTrial: false)
    #expect(!exercise.heldForConsent, "consent required, nothing held yet")
    let awaiting = Fixture.activation(consent: true, kept: Fixture.kept("3.0.0+0", hold: "awaiting consent"))
    exercise.observe(Self.say(awaiting), running: "2.0.0+0", onTrial: false)
    #expect(exercise.heldForConsent && !exercise.done)
    let decline = ActivationStatus.Consent(version: "3.0.0+0", decision: "decline", until: nil, at: 1)
    let declining = Fixture.activation(
      consent: true, kept: Fixture.kept("3.0.0+0", hold: "declined"), answer: decline)
    exercise.observe(Self.say(declining), running: "2.0.0+0", onTrial: false)
    #expect(!exercise.done, "declined, not yet dropped")
    exercise.observe(
      Self.say(Fixture.activation(consent: true, answer: decline)), running: "2.0.0+0", onTrial: false)
    #expect(exercise.done && !exercise.underWay)
    exercise.observe(Self.say(Fixture.activation()), running: "2.0.0+0", onTrial: false)
    #expect(exercise.done, "done stays done")
  }

  @Test func aRollbackOrAnotherVersionIsNotTheHeldOneActivated() {
    var exercise = SayExercise()
    let held = Fixture.activation(locks: [Fixture.lock], kept: Fixture.kept(hold: "an update lock"))
    exercise.observe(Self.say(held), running: "1.0.0+0", onTrial: false)
    exercise.observe(Self.say(Fixture.activation()), running: "1.0.0+0", onTrial: false)
    #expect(!exercise.activatedOnItsOwn, "the trial rolled back: 1.0.0 runs")
    let declined = Fixture.activation(
      consent: true, answer: .init(version: "2.0.0+0", decision: "decline", until: nil, at: 1))
    exercise.observe(Self.say(declined), running: "1.0.0+0", onTrial: false)
    #expect(!exercise.done, "a decline before the lock's image ran does not count")
  }

  @Test func theTenthExerciseOpensAtTheFactoryFirmwareAndStaysOpenWhileUnderWay() throws {
    let factory = LabExercise.list(.init(running: "1.0.0+0", onTrial: false, pushing: nil), done: [])
    let tenth = try #require(factory.last)
    #expect(tenth.number == 10 && tenth.title == "The device has a say" && tenth.state == .ready)
    #expect(tenth.buttons.contains("hold-lock") && tenth.buttons.contains("consent-decline"))
    let v2 = LabExercise.list(.init(running: "2.0.0+0", onTrial: false, pushing: nil), done: [])
    #expect(v2[9].state == .locked && v2[9].first?.contains("Reset") == true)
    let trial = LabExercise.list(
      .init(running: "2.0.0+0", onTrial: true, pushing: nil, sayUnderWay: true), done: [])
    #expect(trial[9].state == .ready, "the device activating on its own keeps the exercise open")
    let pushing = LabExercise.list(.init(running: "1.0.0+0", onTrial: false, pushing: "push v2"), done: [])
    #expect(pushing[9].state == .ready)
    #expect(
      LabExercise.list(.init(running: "2.0.0+0", onTrial: false, pushing: nil), done: [10])[9].state == .done)
  }
}
