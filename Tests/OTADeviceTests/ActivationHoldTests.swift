import OTABoot
import OTAChecksum
import OTAEngine
import OTANordicDFU
import OTAReceiverHost
import OTASMPServer
import OTAStorage
import OTAStorageTesting
import OTATrust
import OTAWire
import Testing

/// The device's say over activations (docs/PROTOCOL.md, "Activation: the device has a say"): an
/// update lock, the owner's consent, a window; a held activation kept and carried out by the device
/// itself; a security update held at most the maximum deferral; nothing of it in a verdict's way.
@Suite struct ActivationHoldTests {
  static let v2 = Version(major: 2, minor: 0, revision: 0)
  static let t0: Int64 = 1_800_000_000
  static let printer = UpdateLock(holder: "printer", reason: "printing job 17", pid: 4242, until: nil)

  /// An MCUboot image of `v2`, with a security counter when asked.
  static func image(securityCounter: UInt32? = nil) throws -> [UInt8] {
    try MCUbootImageBuilder(
      version: v2, headerSize: 0x20,
      securityCounter: securityCounter.map { .value($0) }
    ).build(payload: DeviceFixture.image(size: 5000, seed: 0xD0))
  }

  /// The OTA protocol's requests to the host, as a central sends them; the answers.
  static func control(_ request: Request, _ host: inout ReceiverHost, at now: Duration = .seconds(1))
    throws -> [Response]
  {
    try host.handle(.control(request.encoded, now: now)).compactMap {
      if case .notify(let bytes) = $0 { try? Response(bytes: bytes) } else { nil }
    }
  }

  /// `image` received and validated over the OTA protocol: PREPARE, chunks, one WINDOW, VALIDATE.
  static func stage(_ image: [UInt8], _ host: inout ReceiverHost) throws {
    let crc = CRC32.checksum(image)
    #expect(
      try control(.prepare(size: UInt32(image.count), crc32: crc, version: v2), &host).last?.status
        == .success)
    for offset in stride(from: 0, to: image.count, by: 200) {
      let chunk = DataChunk(offset: UInt32(offset), payload: image[offset..<min(offset + 200, image.count)])
      _ = try host.handle(.data(chunk.encoded, now: .seconds(1)))
    }
    let window = try control(.window(offset: 0, length: UInt32(image.count), crc32: crc), &host)
    #expect(window.last?.status == .success)
    #expect(try control(.validate, &host).last?.status == .success)
  }

  static func host(
    _ fixture: DeviceFixture, time: Int64 = t0, locks: [UpdateLock] = [], policy: ActivationPolicy = .init()
  ) throws -> ReceiverHost {
    var host = try fixture.makeHost()
    host.surroundings = QuietSurroundings(time: time, locks: locks)
    host.activationPolicy = policy
    return host
  }

  @Test func aLockKeepsTheActivationAndTheDeviceCarriesItOutOnceTheLockIsGone() throws {
    // [P-HOLD-1] [P-RESP-10] [P-INFO-31]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try Self.host(fixture, locks: [Self.printer])
    try Self.stage(try Self.image(), &host)
    let answer = try Self.control(.activate(permanent: false), &host).last
    #expect(answer?.status == .deferred)
    #expect(answer?.payload == .deferral(ActivationDeferral(reason: .locked, askAgainAfter: 60)))
    #expect(host.boot.trial == nil, "the boot pointer did not move")
    #expect(host.info().keptActivation.kind == .trial && host.info().keptActivation.hold == .locked)
    #expect(host.info().transfer.state == .validated)

    // A restart keeps it (the record names the validated transfer).
    var restarted = try Self.host(fixture, time: Self.t0 + 5, locks: [Self.printer])
    #expect(restarted.keptActivation?.version == Self.v2)
    #expect(
      try restarted.activateKeptIfDue() == .held(.locked, "printer holds an update lock: printing job 17"))
    #expect(restarted.boot.trial == nil)

    restarted.surroundings = QuietSurroundings(time: Self.t0 + 9)
    guard case .activated(let journal, overrode: nil) = try restarted.activateKeptIfDue() else {
      Issue.record("the kept activation was not carried out")
      return
    }
    #expect(journal.version == Self.v2 && restarted.boot.trial?.slot == .b)
    #expect(restarted.keptActivation == nil)
    #expect(try fixture.medium.load(ActivationRecords.activationName) == nil)
    #expect(try fixture.boot(verdict: .passes).running == .b)
  }

  @Test func aNewTransferForgetsTheKeptActivationOfTheImageItReplaces() throws {
    // [P-HOLD-1]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try Self.host(fixture, locks: [Self.printer])
    try Self.stage(try Self.image(), &host)
    #expect(try Self.control(.activate(permanent: false), &host).last?.status == .deferred)
    #expect(host.info().keptActivation.kind == .trial)
    try Self.stage(try Self.image(securityCounter: 1), &host)
    #expect(host.keptActivation == nil && host.info().keptActivation == .none)
    #expect(try fixture.medium.load(ActivationRecords.activationName) == nil)
  }

  @Test func aLockWhoseDeadlinePassedHoldsNothing() throws {
    // [P-HOLD-1]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    let lapsed = UpdateLock(holder: "job", reason: "until noon", pid: nil, until: Self.t0 - 1)
    var host = try Self.host(fixture, locks: [lapsed])
    try Self.stage(try Self.image(), &host)
    #expect(try Self.control(.activate(permanent: false), &host).last?.status == .success)
    #expect(host.boot.trial?.slot == .b)
  }

  @Test func consentPostponementAndDecline() throws {
    // [P-HOLD-2] [P-INFO-7]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try Self.host(fixture, policy: ActivationPolicy(requireConsent: true))
    #expect(host.info().flags.contains(.consentRequired))
    try Self.stage(try Self.image(), &host)
    #expect(
      try Self.control(.activate(permanent: false), &host).last?.payload
        == .deferral(ActivationDeferral(reason: .awaitingConsent, askAgainAfter: 60)))

    // Postponed for an hour: the answer says when to ask again.
    try fixture.medium.replace(
      ActivationRecords.consentName,
      with: ActivationRecords.encode(
        ConsentAnswer(version: Self.v2, decision: .postpone, until: Self.t0 + 3600, at: Self.t0)))
    #expect(
      try Self.control(.activate(permanent: false), &host, at: .seconds(2)).last?.payload
        == .deferral(ActivationDeferral(reason: .postponed, askAgainAfter: 3600)))
    // An answer about another version counts for nothing.
    try fixture.medium.replace(
      ActivationRecords.consentName,
      with: ActivationRecords.encode(
        ConsentAnswer(version: DeviceFixture.runningVersion, decision: .accept, at: Self.t0)))
    #expect(try Self.control(.activate(permanent: false), &host, at: .seconds(3)).last?.status == .deferred)

    // Declined: ACTIVATE answers 0x0F and the transfer is dropped.
    try fixture.medium.replace(
      ActivationRecords.consentName,
      with: ActivationRecords.encode(ConsentAnswer(version: Self.v2, decision: .decline, at: Self.t0)))
    #expect(try Self.control(.activate(permanent: false), &host, at: .seconds(4)).last?.status == .declined)
    #expect(host.info().transfer.state == .idle && host.keptActivation == nil && host.boot.trial == nil)
  }

  @Test func consentGivenLetsTheKeptActivationGoAhead() throws {
    // [P-HOLD-2]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try Self.host(fixture, policy: ActivationPolicy(requireConsent: true))
    try Self.stage(try Self.image(), &host)
    #expect(try Self.control(.activate(permanent: true), &host).last?.status == .deferred)
    #expect(host.info().keptActivation.kind == .permanent)
    _ = try host.handle(.disconnected)
    #expect(try host.activateKeptIfDue() == .held(.awaitingConsent, "it awaits its owner's consent"))
    try fixture.medium.replace(
      ActivationRecords.consentName,
      with: ActivationRecords.encode(ConsentAnswer(version: Self.v2, decision: .accept, at: Self.t0)))
    guard case .activated = try host.activateKeptIfDue() else {
      Issue.record("accepted, the kept activation did not go ahead")
      return
    }
    #expect(host.boot.confirmed == .b, "kept as permanent: no trial")
  }

  @Test func aSecurityUpdateGoesAheadOnceTheMaximumDeferralHasPassed() throws {
    // [P-HOLD-3] [SEC-ATK-64]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    let policy = ActivationPolicy(requireConsent: true, maxDeferral: 600)
    var host = try Self.host(fixture, locks: [Self.printer], policy: policy)
    try Self.stage(try Self.image(securityCounter: 5), &host)
    let first = try Self.control(.activate(permanent: false), &host).last
    #expect(first?.status == .deferred)
    #expect(host.keptActivation?.security == true)
    _ = try host.handle(.disconnected)
    host.surroundings = QuietSurroundings(time: Self.t0 + 599, locks: [Self.printer])
    #expect(try host.activateKeptIfDue() == .held(.locked, "printer holds an update lock: printing job 17"))
    host.surroundings = QuietSurroundings(time: Self.t0 + 600, locks: [Self.printer])
    guard case .activated(_, overrode: .locked?) = try host.activateKeptIfDue() else {
      Issue.record("a security update past its maximum deferral was held")
      return
    }
    #expect(host.boot.trial?.slot == .b)
  }

  @Test func aSecurityUpdateMayBePostponedButNotDeclined() throws {
    // [P-HOLD-3] [SEC-ATK-64]
    let policy = ActivationPolicy(requireConsent: true, maxDeferral: 600)
    let kept = KeptActivationRecord(
      slot: .b, version: Self.v2, size: 1, crc32: 1, permanent: false, firstHeld: Self.t0, security: true)
    let declined = ConsentAnswer(version: Self.v2, decision: .decline, at: Self.t0)
    guard
      case .hold(.postponed, _, let after) = policy.decide(
        kept, now: Self.t0 + 10, locks: [], consent: declined)
    else {
      Issue.record("a declined security update was not held as postponed")
      return
    }
    #expect(after == 60)
    #expect(
      policy.decide(kept, now: Self.t0 + 600, locks: [], consent: declined) == .go(overrode: .postponed))
    var plain = kept
    plain.security = false
    #expect(policy.decide(plain, now: Self.t0 + 10, locks: [], consent: declined) == .declined)
    // A postponement past the deadline is cut short: looked at again when the deferral ends.
    let longPostponement = ConsentAnswer(
      version: Self.v2, decision: .postpone, until: Self.t0 + 9000, at: Self.t0)
    #expect(
      policy.decide(kept, now: Self.t0 + 100, locks: [], consent: longPostponement)
        == .hold(.postponed, detail: "postponed by its owner for 8900 s", askAgainAfter: 500))
  }

  @Test func scheduleActivatesWithinItsWindowAndLapsesAfterIt() throws {
    // [P-HOLD-4] [P-REQ-15] [P-INFO-31]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try Self.host(fixture)
    #expect(
      try Self.control(.schedule(ActivationWindow(notBefore: 0, notAfter: nil, permanent: false)), &host)
        .last?.status == .invalidState)
    try Self.stage(try Self.image(), &host)
    let start = UInt32(Self.t0 + 100)
    let backwards = ActivationWindow(notBefore: start, notAfter: start - 1, permanent: false)
    #expect(try Self.control(.schedule(backwards), &host).last?.status == .invalidParameter)
    let window = ActivationWindow(notBefore: start, notAfter: start + 3600, permanent: false)
    #expect(try Self.control(.schedule(window), &host).last?.status == .success)
    let info = host.info().keptActivation
    #expect(
      info.kind == .trial && info.hold == .beforeWindow && info.notBefore == start
        && info.notAfter == start + 3600)
    #expect(info.askAgainAfter == 100)
    _ = try host.handle(.disconnected)
    #expect(try host.activateKeptIfDue() == .held(.beforeWindow, "its window opens in 100 s"))

    // Past its end: it lapses, the image stays validated.
    var late = try Self.host(fixture, time: Self.t0 + 100 + 3600)
    #expect(try late.activateKeptIfDue() == .lapsed(Self.v2))
    #expect(late.info().transfer.state == .validated && late.keptActivation == nil)

    // Scheduled again, within the window: carried out.
    #expect(
      try Self.control(.schedule(ActivationWindow(notBefore: 0, notAfter: nil, permanent: false)), &late)
        .last?.status == .success)
    _ = try late.handle(.disconnected)
    guard case .activated = try late.activateKeptIfDue() else {
      Issue.record("a window that is open did not activate")
      return
    }
  }

  @Test func aDeviceWithoutFeatureBit5AnswersScheduleAsUnknown() throws {
    // [P-REQ-15] [P-INFO-24]
    var fixture = DeviceFixture(slotCapacity: 64 * 1024)
    fixture.features = [.missingRanges]
    var host = try fixture.makeHost()
    #expect(
      try Self.control(.schedule(ActivationWindow(notBefore: 0, notAfter: nil, permanent: false)), &host)
        .last?.status == .unknownOpcode)
    #expect(host.info().keptActivation == .none)
  }

  @Test func nothingHoldsAVerdict() throws {
    // [P-HOLD-5] [SEC-ATK-67]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try Self.host(fixture)
    try Self.stage(try Self.image(), &host)
    #expect(try Self.control(.activate(permanent: false), &host).last?.status == .success)
    // The trial runs with a lock held and consent required: CONFIRM still confirms.
    var trial = try fixture.boot(verdict: .silent)
    trial.surroundings = QuietSurroundings(time: Self.t0, locks: [Self.printer])
    trial.activationPolicy = ActivationPolicy(requireConsent: true)
    #expect(trial.runningOnTrial)
    #expect(try Self.control(.confirm, &trial).last?.status == .success)
    #expect(trial.boot.confirmed == .b)

    // And a failing trial rolls back with the lock held.
    let second = DeviceFixture(slotCapacity: 64 * 1024)
    var other = try Self.host(second)
    try Self.stage(try Self.image(), &other)
    _ = try Self.control(.activate(permanent: false), &other)
    var failing = try second.boot(verdict: .silent)
    failing.surroundings = QuietSurroundings(time: Self.t0, locks: [Self.printer])
    failing.activationPolicy = ActivationPolicy(requireConsent: true)
    #expect(failing.runningOnTrial)
    try failing.failTrialBoot(.healthCheckFailed)
    let after = try second.boot(verdict: .fails)
    #expect(after.running == .a && after.boot.outcome.result == .rolledBack)
  }

  @Test func smpAndNordicDFUAnswerAHeldActivationInTheirOwnTerms() throws {
    // [P-HOLD-1] [P-HOLD-2] [S-HOLD-1] [S-HOLD-2]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try Self.host(fixture, locks: [Self.printer])
    var smp = SMPDevice()
    var client = SMPDeviceTests.Client()
    let image = try SMPDeviceTests.image()
    _ = try SMPDeviceTests.upload(image, device: &smp, host: &host, client: &client)
    let hash = try #require(try SMPDeviceTests.states(&smp, &host, &client).last?["hash"]?.bytesValue)
    let test = client.message(.write, group: 1, command: 0, .textMap(["hash": .bytes(hash)]))
    // Zephyr's nearest word for "not now": MGMT_ERR_EBUSY; the activation is kept.
    #expect(try client.body(try smp.handle(test, host: &host)) == .textMap(["rc": .unsigned(10)]))
    #expect(host.keptActivation != nil && host.boot.trial == nil)

    // Declined by the owner: MGMT_ERR_EACCESSDENIED, and the image is dropped.
    host.activationPolicy = ActivationPolicy(requireConsent: true)
    host.surroundings = QuietSurroundings(time: Self.t0)
    try fixture.medium.replace(
      ActivationRecords.consentName,
      with: ActivationRecords.encode(
        ConsentAnswer(version: SMPDeviceTests.v2, decision: .decline, at: Self.t0)))
    #expect(try client.body(try smp.handle(test, host: &host)) == .textMap(["rc": .unsigned(11)]))
    #expect(host.transaction.transfer == nil && host.boot.trial == nil)
  }

  @Test func legacyDFUKeepsItsValidatedImageWhenTheActivationIsHeld() throws {
    // [P-HOLD-1]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var session = LegacyDFUTests.Session(
      device: LegacyDFUDevice(), host: try Self.host(fixture, locks: [Self.printer]))
    try session.send(LegacyDFUTests.firmware, initPacket: LegacyDFUTests.initPacket())
    try session.control([0x04])
    #expect(session.notifications.last == [0x10, 0x04, 0x01])
    try session.control([0x05])
    #expect(session.notifications.last == [0x10, 0x05, 0x06], "operation failed: kept, not activated")
    #expect(!session.restarted && session.host.keptActivation != nil && session.host.boot.trial == nil)
    session.host.surroundings = QuietSurroundings(time: Self.t0 + 1)
    try session.control([0x05])
    #expect(session.restarted && session.host.boot.trial?.slot == .b, "asked again once the lock is gone")
  }

  @Test func theDeviceWaitsWhileACentralsSessionHoldsIt() throws {
    // [P-HOLD-6]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try Self.host(fixture, locks: [Self.printer])
    try Self.stage(try Self.image(), &host)
    #expect(try Self.control(.activate(permanent: false), &host).last?.status == .deferred)
    host.surroundings = QuietSurroundings(time: Self.t0 + 1)
    #expect(try host.activateKeptIfDue() == .nothing, "the central's session still holds the device")
    host.advance(to: .seconds(32))
    guard case .activated = try host.activateKeptIfDue() else {
      Issue.record("once the session lapsed, the kept activation did not go ahead")
      return
    }
  }

  @Test func aDamagedOrStrayRecordIsDroppedAndNothingIsLost() throws {
    // [P-HOLD-1] [SEC-ATK-66]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try Self.host(fixture, locks: [Self.printer])
    try Self.stage(try Self.image(), &host)
    _ = try Self.control(.activate(permanent: false), &host)
    try fixture.medium.replace(
      ActivationRecords.activationName, with: Array("slot=B\nversion=garbage\n".utf8))
    let restarted = try Self.host(fixture)
    #expect(restarted.keptActivation == nil)
    #expect(restarted.startNotices.contains { $0.contains("kept activation") })
    #expect(restarted.info().transfer.state == .validated, "the image stays validated: a central asks again")
    #expect(try fixture.medium.load(ActivationRecords.activationName) == nil)
  }

  /// A power cut at every storage operation of a kept activation carried out: the next boot runs a
  /// good image, and the device still goes on to the new one (nothing needs a person).
  @Test func aPowerCutAnywhereInTheKeptActivationEndsOnAGoodImage() throws {
    // [P-HOLD-1] [P-HOLD-5] [SEC-ATK-66]
    var cut = 0
    while true {
      let fixture = DeviceFixture(slotCapacity: 64 * 1024)
      var host = try Self.host(fixture, locks: [Self.printer])
      try Self.stage(try Self.image(), &host)
      _ = try Self.control(.activate(permanent: false), &host)
      _ = try host.handle(.disconnected)
      host.surroundings = QuietSurroundings(time: Self.t0 + 1)
      fixture.medium.inject(.powerCut, atOperation: cut)
      do {
        _ = try host.activateKeptIfDue()
      } catch .powerCut {
      }
      let fired = fixture.medium.isPoweredOff
      fixture.medium.clearFaults()
      if fired { fixture.medium.reboot(seed: UInt64(cut)) }
      var after = try fixture.boot(verdict: .passes)
      after.surroundings = QuietSurroundings(time: Self.t0 + 2)
      #expect([.a, .b].contains(after.running) && !after.runningOnTrial, "cut \(cut)")
      if after.running == .a {
        // Not yet activated: the kept activation (or, failing that, the validated image) remains.
        #expect(after.info().transfer.state == .validated || after.boot.trial == nil, "cut \(cut)")
        if after.keptActivation != nil {
          guard case .activated = try after.activateKeptIfDue() else {
            Issue.record("cut \(cut): the kept activation did not go ahead after the restart")
            break
          }
          #expect(try fixture.boot(verdict: .passes).running == .b, "cut \(cut)")
        }
      }
      if !fired { break }
      cut += 1
    }
    #expect(cut > 3, "the cuts reached every step")
  }
}
