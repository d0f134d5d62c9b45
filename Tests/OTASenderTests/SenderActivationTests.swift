import OTAChecksum
import Testing

@testable import OTASender
@testable import OTAWire

/// The device has a say (PROTOCOL.md, Activation: the device has a say): ACTIVATE answered
/// deferred or declined, and SCHEDULE instead of ACTIVATE.
@Suite struct SenderActivationTests {
  static let image = SenderEngineTests.image
  static let crc = SenderEngineTests.crc
  static let version = SenderEngineTests.version
  static let window = ActivationWindow(notBefore: 1_796_004_000, notAfter: 1_796_011_200, permanent: false)

  static func info(features: Features, state: DeviceState = .idle, transfer: TransferStatus = .idle)
    -> [UInt8]
  {
    InfoRecord(
      state: state, runningSlot: .a, flags: [],
      slotVersions: SlotPair(a: SenderEngineTests.oldVersion, b: .zero), inactiveSlotContent: .unknown,
      slotCapacity: 4096, windowCapacity: 256, maxChunkPayload: 240, transfer: transfer,
      transferVersion: .zero,
      lastOutcome: .none, features: features
    ).encoded
  }

  static let validatedStatus = TransferStatus(
    state: .validated, size: 1000, crc32: crc, committedOffset: 1000)

  /// Connects, finds the image validated already (STATUS), and answers VALIDATE with success: the
  /// actions after VALIDATE's answer.
  static func validated(
    _ sender: inout SenderEngine, features: Features = [.scheduledActivation]
  ) -> [SenderAction] {
    _ = sender.handle(.start(now: .zero))
    _ = sender.handle(.connected(mtu: 247, now: .zero))
    _ = sender.handle(.info(info(features: features), now: .zero))
    _ = sender.handle(
      .notification(Response(.status, .success, .status(validatedStatus)).encoded, now: .zero))
    return sender.handle(.notification(Response(.validate, .success).encoded, now: .zero))
  }

  static func answer(_ sender: inout SenderEngine, _ response: Response) -> [SenderAction] {
    sender.handle(.notification(response.encoded, now: .seconds(1)))
  }

  static func writes(_ actions: [SenderAction]) -> [[UInt8]] {
    actions.compactMap { if case .writeControl(let bytes) = $0 { bytes } else { nil } }
  }

  @Test func aDeferredActivateEndsThePushWithTheActivationKeptNotAFailure() {
    // [P-HOLD-1] [P-RESP-10]
    var sender = SenderEngine(image: Self.image, configuration: SenderConfiguration(version: Self.version))
    #expect(SenderEngineTests.controls(Self.validated(&sender)) == [.activate(permanent: false)])
    // 0x60 0x05 0x0E, hold reason 1 (an update lock), ask again after 60 s.
    let bytes: [UInt8] = [0x60, 0x05, 0x0E, 0x01, 60, 0, 0, 0]
    let actions = sender.handle(.notification(bytes, now: .seconds(1)))
    let deferral = ActivationDeferral(reason: .locked, askAgainAfter: 60)
    #expect(SenderEngineTests.finished(actions) == .activationKept(.deferred(deferral), sender.report))
    #expect(sender.report.validatedAt != nil, "the image is validated on the device")
    #expect(sender.phase == .finished)
    // Nothing more is asked: no restart is waited for, the link is let go (P-HOLD-6).
    #expect(Self.writes(actions).isEmpty)
    #expect(sender.handle(.disconnected(now: .seconds(2))).isEmpty)
  }

  @Test func aDeclinedActivateIsAFailureOfItsOwn() {
    // [P-HOLD-2]
    var sender = SenderEngine(image: Self.image, configuration: SenderConfiguration(version: Self.version))
    _ = Self.validated(&sender)
    let actions = Self.answer(&sender, Response(.activate, .declined))
    #expect(SenderEngineTests.finished(actions) == .failed(.declined, sender.report))
    #expect(Self.writes(actions).isEmpty)
  }

  @Test func aScheduleGoesAfterValidateInsteadOfActivateByteForByte() {
    // [P-REQ-15] [P-HOLD-4]
    var sender = SenderEngine(
      image: Self.image,
      configuration: SenderConfiguration(version: Self.version, permanent: true, schedule: Self.window))
    let actions = Self.validated(&sender)
    // opcode 0x0A, not before u32, not after u32 (little-endian), flags u8 (bit 0 permanent).
    #expect(
      Self.writes(actions) == [
        [0x0A, 0xA0, 0xD8, 0x0C, 0x6B, 0xC0, 0xF4, 0x0C, 0x6B, 0x01]
      ])
    #expect(UInt32(0x6B0C_D8A0) == Self.window.notBefore && UInt32(0x6B0C_F4C0) == Self.window.notAfter)
    let done = Self.answer(&sender, Response(.schedule, .success))
    let kept = ActivationWindow(
      notBefore: Self.window.notBefore, notAfter: Self.window.notAfter, permanent: true)
    #expect(SenderEngineTests.finished(done) == .activationKept(.scheduled(kept), sender.report))
  }

  @Test func aWindowWithoutAnEndIsSentAsZero() {
    // [P-REQ-15]
    let open = ActivationWindow(notBefore: 0x0102_0304, notAfter: nil, permanent: false)
    var sender = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Self.version, schedule: open))
    #expect(Self.writes(Self.validated(&sender)) == [[0x0A, 0x04, 0x03, 0x02, 0x01, 0, 0, 0, 0, 0x00]])
  }

  @Test func aDeviceWithoutFeatureBit5IsRefusedBeforeAnythingIsSent() {
    // [P-REQ-15]
    var sender = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Self.version, schedule: Self.window))
    _ = sender.handle(.start(now: .zero))
    _ = sender.handle(.connected(mtu: 247, now: .zero))
    let actions = sender.handle(.info(Self.info(features: [.missingRanges, .operations]), now: .zero))
    #expect(SenderEngineTests.finished(actions) == .failed(.schedulingUnsupported, sender.report))
    #expect(Self.writes(actions).isEmpty, "not even STATUS")
    // Without a schedule the same device is pushed as ever.
    var plain = SenderEngine(image: Self.image, configuration: SenderConfiguration(version: Self.version))
    _ = plain.handle(.start(now: .zero))
    _ = plain.handle(.connected(mtu: 247, now: .zero))
    #expect(SenderEngineTests.finished(plain.handle(.info(Self.info(features: []), now: .zero))) == nil)
  }

  @Test func scheduleAnsweredUnknownOpcodeSaysTheDeviceCannotScheduleAndAnEndedWindowIsRefused() {
    // [P-REQ-15]
    var old = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Self.version, schedule: Self.window))
    _ = Self.validated(&old)
    #expect(
      SenderEngineTests.finished(Self.answer(&old, Response(.schedule, .unknownOpcode)))
        == .failed(.schedulingUnsupported, old.report))
    var ended = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Self.version, schedule: Self.window))
    _ = Self.validated(&ended)
    #expect(
      SenderEngineTests.finished(Self.answer(&ended, Response(.schedule, .invalidParameter)))
        == .failed(.refused(.schedule, .invalidParameter), ended.report))
  }

  @Test func aScheduleLostWithTheLinkIsSentAgainNotAnActivate() {
    // [P-REQ-15]
    var sender = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Self.version, schedule: Self.window))
    _ = Self.validated(&sender)
    _ = sender.handle(.disconnected(now: .seconds(1)))
    _ = sender.handle(.connected(mtu: 247, now: .seconds(2)))
    let actions = sender.handle(
      .info(
        Self.info(features: [.scheduledActivation], state: .validated, transfer: Self.validatedStatus),
        now: .seconds(2)))
    #expect(SenderEngineTests.controls(actions) == [.schedule(Self.window)])
  }
}
