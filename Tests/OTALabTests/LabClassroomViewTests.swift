import OTALab
import OTAReport
import Testing

@Suite struct UpdateCycleTests {
  func status(
    running: String = "A", slots: [(String, String)], trial: String? = nil,
    journal: (state: String, slot: String)? = nil, outcome: String = "none"
  ) -> DeviceStatusReport {
    DeviceStatusReport(
      running: running, confirmed: running, onTrial: trial != nil, bootloader: "file",
      slots: slots.map {
        .init(
          slot: $0.0, running: $0.0 == running, confirmed: $0.0 == running, status: $0.1,
          version: $0.1 == "empty" ? nil : "1.0.0+0", capacity: 1 << 20, path: "/x", securityCounter: 0)
      },
      trial: trial.map { .init(slot: $0, attemptsLeft: 2, attemptsAllowed: 2, begun: true) },
      lastOutcome: .init(result: outcome, from: "A", to: "B", reason: "", attemptsUsed: 0),
      bootState: "present",
      runningImage: nil, provisional: false, rebuilt: nil, securityFloor: 0, signaturesRequired: true,
      trustedKeys: [], downgradesAllowed: false,
      transfer: journal.map {
        .journal(
          .init(
            state: $0.state, slot: $0.slot, size: 41686, crc32: "00000000", version: "2.0.0", committed: 8192)
        )
      } ?? .missing)
  }

  @Test func theDiagramLightsTheSlotAnUpdateIsAbout() {
    let start = UpdateCycle(status(slots: [("A", "good"), ("B", "empty")]))
    #expect(start.slot == "B" && start.stage == .empty)
    let receiving = UpdateCycle(status(slots: [("A", "good"), ("B", "empty")], journal: ("receiving", "B")))
    #expect(receiving.slot == "B" && receiving.stage == .receiving && receiving.slots["A"] == "good")
    let validated = UpdateCycle(status(slots: [("A", "good"), ("B", "empty")], journal: ("validated", "B")))
    #expect(validated.stage == .validated)
    let trial = UpdateCycle(status(running: "B", slots: [("A", "good"), ("B", "on trial")], trial: "B"))
    #expect(trial.slot == "B" && trial.stage == .onTrial)
    let confirmed = UpdateCycle(
      status(running: "B", slots: [("A", "good"), ("B", "good")], outcome: "succeeded"))
    #expect(confirmed.slot == "B" && confirmed.stage == .good)
    let rolledBack = UpdateCycle(
      status(running: "B", slots: [("A", "bad"), ("B", "good")], outcome: "rolled back"))
    #expect(rolledBack.slot == "A" && rolledBack.stage == .bad)
  }
}

@Suite struct LabExerciseTests {
  func states(_ device: LabExercise.Device, done: Set<Int> = []) -> [LabExercise.State] {
    LabExercise.list(device, done: done).map(\.state)
  }

  @Test func theFactoryFirmwareOpensTheFirstExercisesAndSaysWhatTheOthersNeed() {
    let factory = LabExercise.list(.init(running: "1.0.0+0", onTrial: false, pushing: nil), done: [])
    #expect(factory.map(\.number) == Array(1...10), "numbered in the page's order")
    #expect(factory.filter { $0.state == .ready }.map(\.number) == [1, 2, 8, 9, 10])
    #expect(factory[2].first?.contains("exercise 2") == true, "the downgrade needs v2 first")
  }

  @Test func v2ConfirmedOpensTheDowngradeRollbackAndFaultAndLocksTheFactoryOnes() {
    let v2 = LabExercise.list(.init(running: "2.0.0+0", onTrial: false, pushing: nil), done: [1, 2])
    #expect(
      v2.map(\.state) == [.done, .done, .ready, .ready, .ready, .ready, .ready, .ready, .locked, .locked])
    #expect(v2[8].first?.contains("Reset") == true, "the delta needs v1: reset first")
    let pushing = states(.init(running: "2.0.0+0", onTrial: false, pushing: "push v3"))
    #expect(
      pushing[2] == .locked && pushing[3] == .ready, "during v3's push: the power cut, not the downgrade")
    #expect(states(.init(running: nil, onTrial: false, pushing: nil)).allSatisfy { $0 == .locked })
  }

  @Test func aPushsEndCompletesWhatItShowed() {
    #expect(
      LabExercise.completed(
        label: "push unsigned", exitCode: 11, resumedAfterPowerCut: false, flipped: false, faultSet: false)
        == [1])
    #expect(
      LabExercise.completed(
        label: "push unsigned", exitCode: 12, resumedAfterPowerCut: false, flipped: false, faultSet: false)
        == [3])
    #expect(
      LabExercise.completed(
        label: "push v3", exitCode: 7, resumedAfterPowerCut: true, flipped: false, faultSet: false) == [5, 4])
    #expect(
      LabExercise.completed(
        label: "push v3", exitCode: 10, resumedAfterPowerCut: false, flipped: true, faultSet: false) == [6])
    #expect(
      LabExercise.completed(
        label: "push v3", exitCode: 13, resumedAfterPowerCut: false, flipped: false, faultSet: true) == [7])
    #expect(
      LabExercise.completed(
        label: "push v2 delta", exitCode: 0, resumedAfterPowerCut: false, flipped: false, faultSet: false)
        == [9])
    #expect(
      LabExercise.completed(
        label: "push v2", exitCode: 9, resumedAfterPowerCut: false, flipped: false, faultSet: false
      ).isEmpty)
  }
}

@Suite struct BytesOnAirTests {
  /// otactl's progress lines after the transfer say 0 bytes on air (seen: a push that committed
  /// 40.7 KiB showed "0.0 KiB"); the result line's figure is the push's.
  @Test func bytesOnAirSurviveTheLinesAfterTheTransferAndTheResultSaysHowTheyWent() {
    var push = PushProgress(label: "push v2 delta")
    push.apply(.progress(committed: 16_384, total: 41_686, bytesOnAir: 800, t: 0.5))
    push.apply(.progress(committed: 41_686, total: 41_686, bytesOnAir: 0, t: 1.1))
    #expect(push.bytesOnAir == 800)
    push.apply(
      .result(
        ok: true, exitCode: 0, error: nil, seconds: 1.3,
        air: .init(bytesOnAir: 871, transferMode: "delta", plainBytesOnAir: 42_382)))
    #expect(push.bytesOnAir == 871 && push.transferMode == "delta" && push.plainBytesOnAir == 42_382)
  }

  @Test func aResumeIsDrawnWhereItCameOnTheTimeline() {
    var push = PushProgress(label: "push v2")
    push.apply(.progress(committed: 8192, total: 41_686, bytesOnAir: 9000, t: 2))
    push.restarted()
    push.apply(.resume(offset: 8192))
    #expect(push.resumes == [8192] && push.resumeTimes == [2])
  }
}
