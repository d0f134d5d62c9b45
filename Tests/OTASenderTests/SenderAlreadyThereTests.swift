import OTAChecksum
import Testing

@testable import OTASender
@testable import OTAWire

/// The central when the device already has the image's version (issue 12, "Smaller"): running it
/// confirmed, nothing is sent; running it on trial, the push waits for that trial's verdict instead
/// of being refused at PREPARE. And ACTIVATE refused for the image is a validation failure.
@Suite struct SenderAlreadyThereTests {
  typealias Fixture = SenderEngineTests
  static let image = Fixture.image
  static let version = Fixture.version
  static let oldVersion = Fixture.oldVersion

  var sender = SenderEngine(image: image, configuration: SenderConfiguration(version: version))
  var now: Duration = .zero

  init(_ configuration: SenderConfiguration = SenderConfiguration(version: version)) {
    sender = SenderEngine(image: Self.image, configuration: configuration)
  }

  init() { self.init(SenderConfiguration(version: Self.version)) }

  mutating func connect(info: [UInt8]) -> [SenderAction] {
    _ = sender.handle(.start(now: now))
    _ = sender.handle(.connected(mtu: 247, now: now))
    return sender.handle(.info(info, now: now))
  }

  static func writes(_ actions: [SenderAction]) -> [SenderAction] {
    actions.filter {
      switch $0 {
      case .writeControl, .writeData: true
      default: false
      }
    }
  }

  /// The device runs 2.0.0 from slot B, confirmed.
  static let runningConfirmed = Fixture.info(running: .b, versions: SlotPair(a: oldVersion, b: version))
  /// The device runs 2.0.0 from slot B on trial (an earlier push activated it).
  static let runningOnTrial = Fixture.info(
    running: .b, versions: SlotPair(a: oldVersion, b: version), flags: [.runningOnTrial])

  @Test mutating func theVersionRunningConfirmedIsNotSentAgain() {
    // [P-PHASE-2]
    let actions = connect(info: Self.runningConfirmed)
    #expect(Self.writes(actions).isEmpty, "not one byte written: no STATUS, no PREPARE, no chunk")
    guard case .succeeded(let report) = Fixture.finished(actions) else {
      Issue.record("expected success, got \(actions)")
      return
    }
    #expect(report.alreadyRunning)
    #expect(report.deviceAfter?.runningVersion == Self.version)
  }

  @Test mutating func forceSendsTheRunningVersionAgain() {
    // [P-PHASE-2]
    self = Self(SenderConfiguration(version: Self.version, force: true))
    let actions = connect(info: Self.runningConfirmed)
    #expect(Fixture.controls(actions) == [.status], "a forced push goes on to STATUS and PREPARE")
    #expect(Fixture.finished(actions) == nil)
  }

  @Test mutating func anotherVersionRunningIsPushedAsUsual() {
    let actions = connect(info: Fixture.info())
    #expect(Fixture.controls(actions) == [.status])
    #expect(!sender.report.alreadyRunning)
  }

  @Test mutating func theVersionOnTrialIsWaitedForAndItsConfirmationIsSuccess() {
    // [P-PHASE-2] [P-PHASE-11]
    var actions = connect(info: Self.runningOnTrial)
    #expect(Self.writes(actions).isEmpty, "no PREPARE: the device would refuse it while on trial")
    #expect(sender.phase == .awaitingConfirmation)
    #expect(sender.report.joinedTrial)
    now += .seconds(1)
    actions = sender.handle(.tick(now: now))
    #expect(actions.contains(.readInfo), "Info is read again while the trial runs")
    actions = sender.handle(.info(Self.runningConfirmed, now: now))
    guard case .succeeded(let report) = Fixture.finished(actions) else {
      Issue.record("expected success, got \(actions)")
      return
    }
    #expect(report.joinedTrial && !report.alreadyRunning)
  }

  @Test mutating func theVersionOnTrialRolledBackIsARollback() {
    _ = connect(info: Self.runningOnTrial)
    _ = sender.handle(.disconnected(now: now))  // the device restarts: the trial failed
    _ = sender.handle(.connected(mtu: 247, now: now))
    let outcome = UpdateOutcome(
      result: .rolledBack, from: Self.oldVersion, to: Self.version, reason: .healthCheckFailed)
    let actions = sender.handle(
      .info(
        Fixture.info(running: .a, versions: SlotPair(a: Self.oldVersion, b: Self.version), outcome: outcome),
        now: now))
    #expect(
      Fixture.finished(actions)
        == .failed(.rolledBack(running: Self.oldVersion, reason: .healthCheckFailed), sender.report))
  }

  @Test mutating func theVersionOnTrialIsConfirmedFromHereWithConfirm() {
    // [P-PHASE-2] [P-PHASE-11]
    self = Self(SenderConfiguration(version: Self.version, confirm: true))
    var actions = connect(info: Self.runningOnTrial)
    #expect(Fixture.controls(actions) == [.confirm], "CONFIRM, not PREPARE")
    actions = sender.handle(.notification(Response(.confirm, .success).encoded, now: now))
    #expect(actions.contains(.readInfo))
    actions = sender.handle(.info(Self.runningConfirmed, now: now))
    #expect(Fixture.finished(actions).map { if case .succeeded = $0 { true } else { false } } == true)
  }

  /// PROTOCOL.md, ACTIVATE: "a failure answers that check's status (0x06, 0x08, 0x09, 0x0A)": the
  /// central reports it as the validation failure it is, not as a refused request.
  @Test(arguments: [StatusCode.crcMismatch, .validationFailed, .signatureInvalid, .downgradeRefused])
  func activateRefusedForTheImageIsAValidationFailure(_ status: StatusCode) {
    // [P-PHASE-8]
    var test = Self()
    _ = test.connect(info: Fixture.info())
    let validated = TransferStatus(
      state: .validated, size: UInt32(Self.image.count), crc32: CRC32.checksum(Self.image),
      committedOffset: UInt32(Self.image.count))
    _ = test.sender.handle(
      .notification(Response(.status, .success, .status(validated)).encoded, now: test.now))
    var actions = test.sender.handle(.notification(Response(.validate, .success).encoded, now: test.now))
    #expect(Fixture.controls(actions) == [.activate(permanent: false)])
    actions = test.sender.handle(.notification(Response(.activate, status).encoded, now: test.now))
    #expect(Fixture.finished(actions) == .failed(.validationFailed(status), test.sender.report))
  }

  @Test func activateRefusedForAnotherReasonIsStillARefusal() {
    var test = Self()
    _ = test.connect(info: Fixture.info())
    let validated = TransferStatus(
      state: .validated, size: UInt32(Self.image.count), crc32: CRC32.checksum(Self.image),
      committedOffset: UInt32(Self.image.count))
    _ = test.sender.handle(
      .notification(Response(.status, .success, .status(validated)).encoded, now: test.now))
    _ = test.sender.handle(.notification(Response(.validate, .success).encoded, now: test.now))
    let actions = test.sender.handle(.notification(Response(.activate, .invalidState).encoded, now: test.now))
    #expect(Fixture.finished(actions) == .failed(.refused(.activate, .invalidState), test.sender.report))
  }
}
