import OTABoot
import OTAChecksum
import OTAStorage
import OTAStorageTesting
import OTAWire
import Testing

@Suite struct BootStateTests {
  static let v1 = Version(major: 1, minor: 0, revision: 0)
  static let v2 = Version(major: 2, minor: 0, revision: 0)

  /// A device that took v2 into slot B for a trial of `attempts` boots.
  static func armed(attempts: UInt8 = 3) -> BootState {
    var state = BootState.factory(version: v1)
    state.activate(.b, version: v2, size: 4099, crc32: 0xDEAD_BEEF, attempts: attempts, permanent: false)
    return state
  }

  @Test func bytesRoundTripAndTheLayoutIsFixed() throws {
    // [P-DISK-6]
    var state = Self.armed()
    state.beginAttempt()
    let bytes = state.encoded
    #expect(bytes.count == BootState.byteCount)
    #expect(Array(bytes[0..<4]) == Array("OTAS".utf8))
    // confirmed A, trial B with 2 of 3 boots left
    #expect(Array(bytes[5..<9]) == [0, 1, 2, 3])
    // slot B: status trial, version 2.0.0, size 4099, crc32 deadbeef
    #expect(bytes[26] == 2 && bytes[27] == 2)
    #expect(Array(bytes[35..<43]) == [0x03, 0x10, 0, 0, 0xEF, 0xBE, 0xAD, 0xDE])
    #expect(try BootState(bytes: bytes) == state)
  }

  @Test func everySingleBitFlipIsRefused() {
    // [SEC-CHECK-14]
    let bytes = Self.armed().encoded
    for bit in 0..<(bytes.count * 8) {
      var damaged = bytes
      damaged[bit / 8] ^= 1 << UInt8(bit % 8)
      #expect(throws: WireError.self, "bit \(bit)") { try BootState(bytes: damaged) }
    }
  }

  @Test func truncatedOrInconsistentStatesAreRefused() {
    // [SEC-CHECK-14] [SEC-LIMIT-3]
    let bytes = Self.armed().encoded
    for length in 0..<bytes.count {
      #expect(throws: WireError.self) { try BootState(bytes: Array(bytes.prefix(length))) }
    }
    // A well-checksummed state that confirms an empty slot.
    var state = BootState.factory(version: Self.v1)
    state.slots.a.status = .empty
    #expect(throws: WireError.self) { try BootState(bytes: state.encoded) }
  }

  @Test func aTrialCountsDownThenEndsGoodOrBad() {
    var state = Self.armed(attempts: 2)
    #expect(state.running == .a && !state.runningOnTrial, "armed, not yet booted")
    #expect(state.plan == BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 2)))
    state.beginAttempt()
    #expect(state.running == .b && state.runningOnTrial)
    var good = state
    good.markGood()
    #expect(good.confirmed == .b && good.trial == nil && good[.b].status == .good && good[.a].status == .good)
    #expect(
      good.outcome
        == UpdateOutcome(result: .succeeded, from: Self.v1, to: Self.v2, reason: .none, attemptsUsed: 1))
    #expect(good.plan == BootPlan(primary: .b))
    state.beginAttempt()
    state.markBad(.healthCheckTimedOut)
    #expect(state.confirmed == .a && state.trial == nil && state[.b].status == .bad && state.running == .a)
    #expect(
      state.outcome
        == UpdateOutcome(
          result: .rolledBack, from: Self.v1, to: Self.v2, reason: .healthCheckTimedOut, attemptsUsed: 2))
  }

  @Test func aFailedBootIsRememberedAndTheLastOneRollsBack() throws {
    var state = Self.armed(attempts: 2)
    state.beginAttempt()
    state.failBoot(.healthCheckTimedOut)
    #expect(state.trial?.lastFailure == .healthCheckTimedOut && state.trial?.attemptsLeft == 1)
    #expect(try BootState(bytes: state.encoded) == state)
    state.beginAttempt()
    state.failBoot(.healthCheckFailed)
    #expect(state.trial == nil && state[.b].status == .bad && state.running == .a)
    #expect(state.outcome.reason == .healthCheckFailed && state.outcome.attemptsUsed == 2)
  }

  @Test func aSpentTrialRollsBackForItsLastFailure() {
    var state = Self.armed(attempts: 1)
    state.beginAttempt()
    var silent = state
    silent.rollBackSpentTrial()
    #expect(silent.outcome.reason == .didNotStart)
    state.trial?.lastFailure = .healthCheckFailed
    state.rollBackSpentTrial()
    #expect(state.outcome.reason == .healthCheckFailed)
  }

  @Test func aPermanentActivationSkipsTheTrial() {
    var state = BootState.factory(version: Self.v1)
    state.activate(.b, version: Self.v2, size: 1, crc32: 2, attempts: 3, permanent: true)
    #expect(state.confirmed == .b && state.trial == nil && state.running == .b)
    #expect(state.outcome.result == .succeeded && state.outcome.attemptsUsed == 0)
  }

  @Test func invalidatingTheInactiveSlotDisarmsItsTrial() {
    // [P-REQ-1]
    var state = Self.armed()
    state.invalidate(.b)
    #expect(state[.b] == .empty && state.trial == nil && state.confirmed == .a)
  }

  /// A state read from storage may say a slot runs where the caller's copy did not: the verbs that
  /// would take the running or confirmed slot away refuse and change nothing (they do not trap).
  @Test func theRunningAndConfirmedSlotsAreNeitherInvalidatedNorActivated() {
    var begun = Self.armed()
    begun.beginAttempt()
    let before = begun
    let runningB = begun.invalidate(.b)
    let confirmedA = begun.invalidate(.a)
    let activatedA = begun.activate(.a, version: Self.v2, size: 1, crc32: 2, attempts: 3, permanent: false)
    #expect(!runningB, "B's trial boot began: B runs")
    #expect(!confirmedA, "A holds the confirmed image")
    #expect(!activatedA, "A is confirmed: confirming is how it is activated")
    #expect(begun == before)
    var armed = Self.armed()
    let armedB = armed.invalidate(.b)
    #expect(armedB && armed[.b] == .empty)
  }

  @Test func markGoodWithoutARunningTrialChangesNothing() {
    let factory = BootState.factory(version: Self.v1)
    var state = factory
    state.markGood()
    state.markBad(.markedBad)
    #expect(state == factory)
    var armed = Self.armed()
    armed.markGood()
    #expect(armed == Self.armed(), "an armed trial that never booted is not confirmed")
  }
}

/// The boot table, one test per row, each with every bootloader report that selects it.
@Suite struct BootDecisionTests {
  let v1 = BootStateTests.v1
  let v2 = BootStateTests.v2

  func decide(_ state: BootState?, _ booted: SlotID?) -> BootDecision {
    BootDecision.decide(state, booted: booted, factoryVersion: v1)
  }

  @Test func noStateMeansAFactoryDeviceAroundTheBootedSlot() {
    // [P-DISK-7]
    let none = decide(nil, nil)
    #expect(none.row == .noState && none.run == .a && none.state == .factory(version: v1) && !none.restart)
    let onB = decide(nil, .b)
    #expect(onB.row == .noState && onB.run == .b && onB.state.confirmed == .b)
  }

  @Test func confirmedRuns() {
    let state = BootState.factory(version: v1)
    for booted in [nil, SlotID.a] {
      let decision = decide(state, booted)
      #expect(
        decision.row == .confirmedRuns && decision.run == .a && decision.state == state && !decision.restart)
    }
  }

  @Test func bootloaderDisagrees() {
    var state = BootStateTests.armed()
    state.beginAttempt()
    state.markGood()  // confirmed B; a cut kept the bootloader on A
    let decision = decide(state, .a)
    #expect(decision.row == .bootloaderDisagrees && decision.run == .a && decision.restart)
    #expect(decision.state == state && decision.state.plan == BootPlan(primary: .b))
  }

  @Test func trialBootsCountDown() {
    for booted in [nil, SlotID.b] {
      var state = BootStateTests.armed(attempts: 2)
      var decision = decide(state, booted)
      #expect(decision.row == .trialBoots && decision.run == .b && !decision.restart)
      #expect(decision.state.trial?.attemptsLeft == 1)
      state = decision.state
      decision = decide(state, booted)
      #expect(decision.row == .trialBoots && decision.state.trial?.attemptsLeft == 0)
    }
  }

  @Test func trialExhaustedRollsBack() {
    var state = BootStateTests.armed(attempts: 1)
    state.beginAttempt()
    let decision = decide(state, nil)
    #expect(decision.row == .trialExhausted && decision.run == .a && !decision.restart)
    #expect(decision.state.confirmed == .a && decision.state[.b].status == .bad)
    #expect(decision.state.outcome.result == .rolledBack && decision.state.outcome.reason == .didNotStart)
    #expect(decision.state.outcome.attemptsUsed == 1)
  }

  @Test func trialExhaustedWhileTheBootloaderStillStartsItRestarts() {
    var state = BootStateTests.armed(attempts: 1)
    state.beginAttempt()
    let decision = decide(state, .b)
    #expect(decision.row == .trialExhaustedStillRunning && decision.run == .b && decision.restart)
    #expect(decision.state.plan == BootPlan(primary: .a) && decision.state[.b].status == .bad)
  }

  @Test func bootloaderFellBackRollsBack() {
    for begun in [false, true] {
      var state = BootStateTests.armed(attempts: 3)
      if begun { state.beginAttempt() }
      let decision = decide(state, .a)
      #expect(decision.row == .bootloaderFellBack && decision.run == .a && !decision.restart)
      #expect(
        decision.state.outcome.reason == .didNotStart
          && decision.state.outcome.attemptsUsed == (begun ? 1 : 0))
    }
  }

  @Test func everyRowIsReachable() {
    var armedOnce = BootStateTests.armed(attempts: 1)
    armedOnce.beginAttempt()
    var confirmedB = armedOnce
    confirmedB.markGood()
    let cases: [(BootState?, SlotID?)] = [
      (nil, nil), (.factory(version: v1), nil), (confirmedB, .a), (BootStateTests.armed(), nil),
      (armedOnce, nil),
      (armedOnce, .b), (armedOnce, .a),
    ]
    #expect(Set(cases.map { decide($0.0, $0.1).row }) == Set(BootDecision.Row.allCases))
  }
}

@Suite struct BootStateStoreTests {
  @Test func aDamagedPrimaryIsMovedAsideAndRebuiltFromTheCopy() throws {
    // [P-DISK-7] [SEC-CHECK-14] [SEC-ATK-25]
    let medium = MemoryMedium(slotCapacity: 16)
    let store = BootStateStore(records: medium)
    #expect(try store.load() == .missing)
    let state = BootStateTests.armed()
    try store.save(state)
    var bytes = try #require(try medium.load(BootState.recordName))
    bytes[10] ^= 0x40
    try medium.replace(BootState.recordName, with: bytes)
    #expect(try store.peek() == .present(state), "peek reads the copy")
    #expect(try store.load() == .present(state))
    #expect(try medium.load(BootState.recordName) == state.encoded, "the primary was written again")
    #expect(medium.recordNames().contains(BootState.recordName + ".damaged"))
  }

  @Test func bothCopiesDamagedMeansNoTrustedState() throws {
    // [P-DISK-7] [SEC-ATK-25]
    let medium = MemoryMedium(slotCapacity: 16)
    let store = BootStateStore(records: medium)
    try store.save(BootStateTests.armed())
    try medium.replace(BootState.recordName, with: [1, 2, 3])
    try medium.replace(BootStateStore.copyName, with: [4, 5, 6])
    #expect(try store.peek().isDamaged)
    #expect(try store.load().isDamaged)
    #expect(try store.load() == .missing, "both were moved aside")
  }

  @Test func aCutBetweenTheTwoReplacesKeepsTheNewPrimary() throws {
    // [SEC-ATK-25]
    let medium = MemoryMedium(slotCapacity: 16)
    let store = BootStateStore(records: medium)
    let old = BootState.factory(version: BootStateTests.v1)
    try store.save(old)
    let new = BootStateTests.armed()
    try medium.replace(BootState.recordName, with: new.encoded)  // the copy is still old
    #expect(try store.load() == .present(new))
    #expect(try medium.load(BootStateStore.copyName) == new.encoded)
  }
}

@Suite struct BootStateSecurityCounterTests {
  static let v1 = Version(major: 1, minor: 0, revision: 0)
  static let v2 = Version(major: 2, minor: 0, revision: 0)

  @Test func theFloorRisesOnlyWhenAnImageIsConfirmed() {
    // [SEC-DOWN-2]
    var state = BootState.factory(version: Self.v1)
    state.activate(
      .b, version: Self.v2, size: 10, crc32: 1, securityCounter: 9, attempts: 1, permanent: false)
    #expect(state.securityFloor == 0 && state[.b].securityCounter == 9)
    state.beginAttempt()
    var rolledBack = state
    rolledBack.markBad(.healthCheckFailed)
    #expect(rolledBack.securityFloor == 0)
    state.markGood()
    #expect(state.securityFloor == 9)

    var permanent = BootState.factory(version: Self.v1)
    permanent.activate(
      .b, version: Self.v2, size: 10, crc32: 1, securityCounter: 4, attempts: 1, permanent: true)
    #expect(permanent.securityFloor == 4)
    // It never falls: a confirmed image with a lower counter leaves it where it was.
    permanent.activate(
      .a, version: Self.v2, size: 10, crc32: 1, securityCounter: 2, attempts: 1, permanent: true)
    #expect(permanent.securityFloor == 4)
  }

  @Test func countersAreStoredAfterTheFormatOneFields() throws {
    // [P-DISK-6] [SEC-DOWN-2]
    var state = BootState.factory(version: Self.v1)
    state.activate(
      .b, version: Self.v2, size: 10, crc32: 1, securityCounter: 0x0102_0304, attempts: 1, permanent: true)
    let bytes = state.encoded
    #expect(bytes.count == 144 && bytes[4] == 3)
    #expect(Array(bytes[64..<68]) == [0, 0, 0, 0])
    #expect(Array(bytes[68..<72]) == [4, 3, 2, 1])
    #expect(Array(bytes[72..<76]) == [4, 3, 2, 1])
    #expect(try BootState(bytes: bytes) == state)
  }

  @Test func sealsAreStoredAfterTheCountersAndAFormatTwoRecordIsStillRead() throws {
    // [P-DISK-6]
    var state = BootState.factory(version: Self.v1)
    let seal = (0..<32).map { UInt8($0 + 1) }
    state.activate(.b, version: Self.v2, size: 10, crc32: 1, seal: seal, attempts: 3, permanent: false)
    let bytes = state.encoded
    #expect(Array(bytes[76..<108]) == [UInt8](repeating: 0, count: 32), "slot A: no seal")
    #expect(Array(bytes[108..<140]) == seal)
    #expect(
      Array(bytes[140..<144])
        == {
          var crc: [UInt8] = []; crc.appendU32(CRC32.checksum(bytes[0..<140])); return crc
        }())
    #expect(try BootState(bytes: bytes) == state)
    // The 80-byte record format 2 wrote: the first 76 bytes, its CRC32; read without seals.
    var old = Array(bytes[0..<76])
    old[4] = 2
    old.appendU32(CRC32.checksum(old))
    var unsealed = state
    unsealed.slots.b.seal = nil
    #expect(try BootState(bytes: old) == unsealed)
  }

  @Test func aFormatOneRecordIsStillRead() throws {
    // [P-DISK-6]
    var state = BootState.factory(version: Self.v1)
    state.activate(.b, version: Self.v2, size: 10, crc32: 1, attempts: 3, permanent: false)
    // The 68-byte record format 1 wrote: the first 63 bytes of format 2, a zero, its CRC32.
    var old = Array(state.encoded[0..<64])
    old[4] = 1
    old.appendU32(CRC32.checksum(old))
    #expect(try BootState(bytes: old) == state)
    // A format byte that does not match the length is refused.
    var mixed = old
    mixed[4] = 2
    #expect(throws: WireError.self) { try BootState(bytes: mixed) }
  }
}
