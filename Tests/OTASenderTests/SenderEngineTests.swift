import OTAChecksum
import Testing

@testable import OTASender
@testable import OTAWire

/// The sender on its own: scripted device answers, time passed in by hand.
@Suite struct SenderEngineTests {
  static let image: [UInt8] = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
  static let crc = CRC32.checksum(image)
  static let version = Version(major: 2, minor: 0, revision: 0)
  static let oldVersion = Version(major: 1, minor: 0, revision: 0)

  static func info(
    state: DeviceState = .idle, running: SlotID = .a,
    versions: SlotPair<Version> = SlotPair(a: oldVersion, b: .zero),
    capacity: UInt32 = 4096, transfer: TransferStatus = .idle, outcome: UpdateOutcome = .none,
    flags: InfoRecord.Flags = []
  ) -> [UInt8] {
    InfoRecord(
      state: state, runningSlot: running, flags: flags, slotVersions: versions, inactiveSlotContent: .unknown,
      slotCapacity: capacity, windowCapacity: 256, maxChunkPayload: 240, transfer: transfer,
      transferVersion: .zero, lastOutcome: outcome
    ).encoded
  }

  var sender = SenderEngine(image: image, configuration: SenderConfiguration(version: version))
  var now: Duration = .zero

  mutating func feed(_ event: SenderEvent) -> [SenderAction] { sender.handle(event) }

  /// Connects and reads Info; returns the actions after the Info read.
  mutating func connect(info: [UInt8] = info()) -> [SenderAction] {
    _ = feed(.start(now: now))
    _ = feed(.connected(mtu: 247, now: now))
    return feed(.info(info, now: now))
  }

  mutating func answer(_ response: Response) -> [SenderAction] {
    feed(.notification(response.encoded, now: now))
  }

  static func controls(_ actions: [SenderAction]) -> [Request] {
    actions.compactMap { if case .writeControl(let bytes) = $0 { try? Request(bytes: bytes) } else { nil } }
  }

  static func chunks(_ actions: [SenderAction]) -> [DataChunk] {
    actions.compactMap { if case .writeData(let bytes) = $0 { try? DataChunk(bytes: bytes) } else { nil } }
  }

  static func finished(_ actions: [SenderAction]) -> SenderOutcome? {
    actions.lazy.compactMap { if case .finished(let outcome) = $0 { outcome } else { nil } }.first
  }

  @Test mutating func readsInfoThenAsksStatusThenPrepares() {
    // [P-PHASE-1]
    #expect(Self.controls(connect()) == [.status])
    let actions = answer(Response(.status, .success, .status(.idle)))
    #expect(Self.controls(actions) == [.prepare(size: 1000, crc32: Self.crc, version: Self.version)])
    #expect(Self.chunks(actions).isEmpty, "never stream before PREPARE's answer")
  }

  @Test mutating func refusesAnImageLargerThanTheSlotBeforeAnythingMoves() {
    // [P-PHASE-1]
    let actions = connect(info: Self.info(capacity: 999))
    #expect(Self.finished(actions) == .failed(.tooLarge(size: 1000, capacity: 999), sender.report))
    #expect(Self.controls(actions).isEmpty)
  }

  @Test mutating func refusesARawImageForADeviceThatRequiresSignaturesBeforeAnythingMoves() {
    // [SEC-ATK-37]
    let actions = connect(info: Self.info(flags: [.signaturesRequired]))
    #expect(Self.finished(actions) == .failed(.validationFailed(.signatureInvalid), sender.report))
    #expect(Self.controls(actions).isEmpty)
    // An MCUboot image goes ahead: only the device can check its signature.
    var mcuboot = SenderEngine(
      image: Self.mcubootHeader(flags: 0), configuration: SenderConfiguration(version: Self.version))
    _ = mcuboot.handle(.start(now: now))
    _ = mcuboot.handle(.connected(mtu: 247, now: now))
    #expect(
      Self.controls(mcuboot.handle(.info(Self.info(flags: [.signaturesRequired]), now: now))) == [.status])
  }

  /// The image's bytes with an MCUboot header whose flags are `flags` in front (the rest: Self.image).
  static func mcubootHeader(flags: UInt32) -> [UInt8] {
    var image = [0x3d, 0xb8, 0xf3, 0x96] + Self.image
    image.replaceSubrange(16..<20, with: withUnsafeBytes(of: flags.littleEndian, Array.init))
    return image
  }

  @Test func refusesAnEncryptedImageForADeviceWithoutADecryptionKeyBeforeAnythingMoves() {
    // [P-VAL-10]
    for (flags, expectStatus) in [(InfoRecord.Flags(), false), ([.decryptsImages], true)] {
      var sender = SenderEngine(
        image: Self.mcubootHeader(flags: 0x04), configuration: SenderConfiguration(version: Self.version))
      _ = sender.handle(.start(now: .zero))
      _ = sender.handle(.connected(mtu: 247, now: .zero))
      let actions = sender.handle(.info(Self.info(flags: flags), now: .zero))
      if expectStatus {
        #expect(Self.controls(actions) == [.status], "a device with a key: the push goes ahead")
      } else {
        #expect(Self.finished(actions) == .failed(.validationFailed(.cannotDecrypt), sender.report))
        #expect(Self.controls(actions).isEmpty)
      }
    }
  }

  @Test mutating func streamsWithinCreditAndPipelinesTwoWindows() {
    // [P-PHASE-5]
    _ = connect()
    _ = answer(Response(.status, .success, .status(.idle)))
    var actions = answer(Response(.prepare, .success, .prepared(windowCapacity: 256, maxChunkPayload: 100)))
    #expect(Self.chunks(actions).isEmpty, "no credit yet")
    actions = feed(.writable(count: 3, now: now))
    #expect(Self.chunks(actions).map(\.offset) == [0, 100, 128], "chunks end at the 128-byte window edge")
    #expect(
      Self.controls(actions) == [.window(offset: 0, length: 128, crc32: CRC32.checksum(Self.image[0..<128]))])
    actions = feed(.writable(count: 10, now: now))
    #expect(Self.chunks(actions).map(\.offset) == [228], "two windows in flight: the third waits")
    #expect(
      Self.controls(actions) == [
        .window(offset: 128, length: 128, crc32: CRC32.checksum(Self.image[128..<256]))
      ])
    actions = answer(Response(.window, .success, .offset(128)))
    #expect(Self.chunks(actions).map(\.offset) == [256, 356], "the first answer opens the third window")
    #expect(sender.committed == 128)
  }

  @Test mutating func resumesFromTheCommittedOffsetOfTheSameImage() {
    // [P-PHASE-3]
    _ = connect()
    let status = TransferStatus(state: .receiving, size: 1000, crc32: Self.crc, committedOffset: 512)
    _ = answer(Response(.status, .success, .status(status)))
    let actions = feed(.writable(count: 1, now: now))
    #expect(Self.chunks(actions).first?.offset == 512)
    #expect(sender.report.resumedFrom == [512])
  }

  @Test mutating func aDifferentImageInProgressIsReplaced() {
    // [P-PHASE-3]
    _ = connect()
    let other = TransferStatus(state: .receiving, size: 1000, crc32: Self.crc ^ 1, committedOffset: 512)
    let actions = answer(Response(.status, .success, .status(other)))
    #expect(Self.controls(actions) == [.prepare(size: 1000, crc32: Self.crc, version: Self.version)])
  }

  @Test mutating func aFailedWindowSkipsTheAnswersOfTheOnesBehindIt() {
    // [P-WIN-9]
    _ = connect()
    _ = answer(Response(.status, .success, .status(.idle)))
    _ = answer(Response(.prepare, .success, .prepared(windowCapacity: 512, maxChunkPayload: 128)))
    var actions = feed(.writable(count: 10, now: now))
    #expect(
      Self.chunks(actions).map(\.offset) == [0, 128, 256, 384], "two 256-byte windows fill the capacity")
    actions = answer(Response(.window, .missingData, .offset(64)))
    // Resent from the gap to the window's end, then both commands again; window 2's data is not resent.
    #expect(Self.chunks(actions).map(\.offset) == [64, 192])
    #expect(
      Self.controls(actions).map { (request: Request) -> UInt32 in
        if case .window(let o, _, _) = request { o } else { 99 }
      } == [0, 256])
    actions = answer(Response(.window, .missingData, .offset(64)))  // the stale answer for window 2
    #expect(actions.filter { if case .writeControl = $0 { true } else { false } }.isEmpty)
    _ = answer(Response(.window, .success, .offset(256)))
    #expect(sender.committed == 256)
  }

  @Test mutating func openWindowsNeverReachPastTheDevicesCapacity() {
    // [P-PHASE-5]
    _ = connect()
    _ = answer(Response(.status, .success, .status(.idle)))
    _ = answer(Response(.prepare, .success, .prepared(windowCapacity: 256, maxChunkPayload: 240)))
    let actions = feed(.writable(count: 10, now: now))
    // Two 240-byte chunks do not fit half of 256: one window of 256 bytes, and nothing past it.
    #expect(Self.chunks(actions).map(\.offset) == [0, 240])
    #expect(Self.chunks(actions).allSatisfy { $0.end <= 256 })
  }

  @Test mutating func givesUpOnAWindowThatNeverPasses() {
    // [P-PHASE-7]
    _ = connect()
    _ = answer(Response(.status, .success, .status(.idle)))
    _ = answer(Response(.prepare, .success, .prepared(windowCapacity: 2000, maxChunkPayload: 240)))
    var outcome: SenderOutcome?
    for _ in 0..<20 where outcome == nil {
      _ = feed(.writable(count: 100, now: now))
      outcome = Self.finished(answer(Response(.window, .crcMismatch, .offset(0))))
      // Answers for any windows behind the first one.
      while outcome == nil, !(sender.transfer?.outstanding.isEmpty ?? true) || sender.ignoredWindowAnswers > 0
      {
        outcome = Self.finished(answer(Response(.window, .crcMismatch, .offset(0))))
      }
    }
    guard case .failed(.windowRetriesExhausted(0, .crcMismatch, 8), _) = outcome else {
      Issue.record("\(String(describing: outcome))")
      return
    }
  }

  @Test mutating func anUnansweredCommandTimesOutIntoAReconnect() {
    _ = connect()
    now = .seconds(6)
    let actions = feed(.tick(now: now))
    #expect(actions.contains(.disconnect))
    let reconnect = feed(.disconnected(now: now))
    #expect(reconnect.contains { if case .connect = $0 { true } else { false } })
    #expect(sender.phase == .connecting)
  }

  @Test mutating func reconnectsWithGrowingBackoffThenGivesUp() {
    // [P-PHASE-13]
    _ = feed(.start(now: now))
    var delays: [Duration] = []
    var outcome: SenderOutcome?
    while outcome == nil {
      let actions = feed(.connectFailed(reason: "no device", now: now))
      for case .connect(let delay) in actions { delays.append(delay) }
      outcome = Self.finished(actions)
    }
    #expect(
      delays == [
        .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600),
        .milliseconds(3200), .seconds(5), .seconds(5),
      ])
    guard case .failed(.unreachable(9, _), _) = outcome else {
      Issue.record("\(String(describing: outcome))")
      return
    }
  }

  mutating func validated() {
    _ = connect()
    let status = TransferStatus(state: .validated, size: 1000, crc32: Self.crc, committedOffset: 1000)
    _ = answer(Response(.status, .success, .status(status)))
    let actions = answer(Response(.validate, .success))
    #expect(Self.controls(actions) == [.activate(permanent: false)])
  }

  @Test mutating func theDisconnectAfterActivateIsTheRestartAndTheNewVersionIsVerified() {
    // [P-REQ-5] [P-PHASE-10]
    validated()
    _ = answer(Response(.activate, .success))
    let reconnect = feed(.disconnected(now: now))
    #expect(reconnect.contains { if case .connect = $0 { true } else { false } })
    _ = feed(.connected(mtu: 247, now: now))
    let actions = feed(
      .info(Self.info(running: .b, versions: SlotPair(a: Self.oldVersion, b: Self.version)), now: now))
    guard case .succeeded(let report) = Self.finished(actions) else {
      Issue.record("\(actions)")
      return
    }
    #expect(report.deviceAfter?.runningVersion == Self.version)
  }

  @Test mutating func aRollbackIsAFailureWithItsReason() {
    // [P-PHASE-12]
    validated()
    _ = answer(Response(.activate, .success))
    _ = feed(.disconnected(now: now))
    _ = feed(.connected(mtu: 247, now: now))
    let outcome = UpdateOutcome(
      result: .rolledBack, from: Self.oldVersion, to: Self.version, reason: .healthCheckFailed)
    let actions = feed(
      .info(Self.info(versions: SlotPair(a: Self.oldVersion, b: Self.version), outcome: outcome), now: now))
    #expect(
      Self.finished(actions)
        == .failed(.rolledBack(running: Self.oldVersion, reason: .healthCheckFailed), sender.report))
  }

  @Test mutating func aLostActivateIsSentAgainNotMistakenForARollback() {
    // [P-PHASE-9]
    validated()
    _ = feed(.disconnected(now: now))  // dropped before the answer
    _ = feed(.connected(mtu: 247, now: now))
    let status = TransferStatus(state: .validated, size: 1000, crc32: Self.crc, committedOffset: 1000)
    let actions = feed(.info(Self.info(state: .validated, transfer: status), now: now))
    #expect(Self.controls(actions) == [.activate(permanent: false)])
    #expect(Self.finished(actions) == nil)
  }

  @Test mutating func aValidationFailureEndsThePush() {
    _ = connect()
    let status = TransferStatus(state: .receiving, size: 1000, crc32: Self.crc, committedOffset: 1000)
    _ = answer(Response(.status, .success, .status(status)))
    let actions = answer(Response(.validate, .crcMismatch))
    #expect(Self.finished(actions) == .failed(.validationFailed(.crcMismatch), sender.report))
  }

  @Test mutating func aStorageErrorAtPrepareIsRetriedWithBackoffThenReported() {
    // [P-PHASE-14]
    _ = connect()
    var outcome: SenderOutcome?
    var prepares = 0
    var actions = answer(Response(.status, .success, .status(.idle)))
    while outcome == nil, prepares < 20 {
      if Self.controls(actions).contains(.prepare(size: 1000, crc32: Self.crc, version: Self.version)) {
        prepares += 1
        actions = answer(Response(.prepare, .storageError))
      } else if Self.controls(actions).contains(.status) {
        actions = answer(Response(.status, .success, .status(.idle)))
      } else {
        now += .seconds(10)
        actions = feed(.tick(now: now))
      }
      outcome = Self.finished(actions)
    }
    #expect(prepares == 8, "PREPARE tried 8 times")
    #expect(outcome == .failed(.refused(.prepare, .storageError), sender.report))
  }
}

extension SenderEngineTests {
  static func timers(_ actions: [SenderAction]) -> [Duration] {
    actions.compactMap { if case .armTimer(let due) = $0 { due } else { nil } }
  }

  // [P-TIME-7]
  /// ACTIVATE checks the whole image again, as VALIDATE does: on a large image its answer takes as
  /// long, so it waits the slow timeout (60 s), not the quick one (5 s) after which the link would
  /// be dropped and only the restart path could save the push.
  @Test mutating func activateWaitsForItsAnswerAsLongAsValidate() {
    _ = connect()
    let status = TransferStatus(state: .validated, size: 1000, crc32: Self.crc, committedOffset: 1000)
    let validate = answer(Response(.status, .success, .status(status)))
    #expect(Self.controls(validate) == [.validate])
    #expect(Self.timers(validate) == [.seconds(60)])
    let activate = answer(Response(.validate, .success))
    #expect(Self.controls(activate) == [.activate(permanent: false)])
    #expect(Self.timers(activate) == [.seconds(60)], "ACTIVATE's answer may take as long as VALIDATE's")
    // 5 s, then 59 s without an answer: still waiting for it, the link kept.
    for second in [5, 59] {
      now = .seconds(second)
      let waiting = feed(.tick(now: now))
      #expect(!waiting.contains(.disconnect), "\(second) s into ACTIVATE")
      #expect(sender.phase == .activating)
    }
    // The answer comes late: the restart is expected, not a reconnect after a timeout.
    _ = answer(Response(.activate, .success))
    #expect(sender.phase == .restarting)
    #expect(sender.report.reconnects == 0)
  }

  /// The same for the ACTIVATE sent again after a reconnect (the link dropped before its answer),
  /// and the slow timeout is still a timeout: at 60 s without an answer the link is dropped.
  @Test mutating func activateSentAgainWaitsTheSlowTimeoutAndNoLonger() {
    validated()
    _ = feed(.disconnected(now: now))
    _ = feed(.connected(mtu: 247, now: now))
    let status = TransferStatus(state: .validated, size: 1000, crc32: Self.crc, committedOffset: 1000)
    let again = feed(.info(Self.info(state: .validated, transfer: status), now: now))
    #expect(Self.controls(again) == [.activate(permanent: false)])
    #expect(Self.timers(again) == [.seconds(60)])
    now = .seconds(5)
    #expect(!feed(.tick(now: now)).contains(.disconnect))
    now = .seconds(60)
    #expect(feed(.tick(now: now)).contains(.disconnect))
  }
}

extension SenderEngineTests {
  /// Feeds `event` at each connect the sender asks for, passing the time it asks to wait, until the
  /// push ends; returns the delays asked for and the outcome.
  mutating func refuseEveryConnect(with event: (Duration) -> SenderEvent) -> ([Duration], SenderOutcome?) {
    _ = feed(.start(now: now))
    var delays: [Duration] = []
    var outcome: SenderOutcome?
    while outcome == nil, delays.count < 100 {
      let actions = feed(event(now))
      for case .connect(let delay) in actions {
        delays.append(delay)
        now += delay
      }
      outcome = Self.finished(actions)
    }
    return (delays, outcome)
  }

  /// A device busy with another central (one that connected and says nothing holds it until its
  /// hello timeout, 3 s) is asked again for at least `busyPatience` (10 s), even when the attempts
  /// allowed would run out in 0.7 s; then the push fails as busy, not as unreachable.
  @Test mutating func aBusyDeviceIsWaitedForPastItsHelloTimeoutThenTheFailureSaysBusy() {
    sender = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Self.version, maxConnectAttempts: 3))
    let (delays, outcome) = refuseEveryConnect { .deviceBusy(now: $0) }
    #expect(
      delays == [
        .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600),
        .milliseconds(3200), .seconds(5),
      ])
    #expect(outcome == .failed(.deviceBusy(attempts: 8, waited: .milliseconds(11_300)), sender.report))
  }

  /// The device that stops being busy is connected to; the patience was for the busy answers only.
  @Test mutating func aDeviceNoLongerBusyIsConnectedToAndThePushGoesOn() {
    sender = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Self.version, maxConnectAttempts: 3))
    _ = feed(.start(now: now))
    for _ in 0..<5 {
      let actions = feed(.deviceBusy(now: now))
      #expect(Self.finished(actions) == nil)
      for case .connect(let delay) in actions { now += delay }
    }
    #expect(now == .milliseconds(3100), "past the silent central's 3 s")
    _ = feed(.connected(mtu: 247, now: now))
    #expect(Self.controls(feed(.info(Self.info(), now: now))) == [.status])
  }

  /// Without busy answers the attempts alone decide, as before: a device that is not there is not
  /// waited for.
  @Test mutating func anAbsentDeviceAfterBusyAnswersIsGivenUpOnByTheAttempts() {
    sender = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Self.version, maxConnectAttempts: 3))
    _ = feed(.start(now: now))
    for _ in 0..<3 { _ = feed(.deviceBusy(now: now)) }
    let actions = feed(.connectFailed(reason: "no device", now: now))
    guard case .failed(.unreachable(4, _), _) = Self.finished(actions) else {
      Issue.record("\(actions)")
      return
    }
  }
}
