import OTAEngine
import OTAFuzzing
import OTAJournal
import OTAWire
import Testing

/// The receiver checker can fail: crafted action sequences that a broken engine would produce are
/// each reported, and the same sequence done right is not.
@Suite("Receiver invariant checker")
struct ReceiverCheckerTests {
  static let configuration = ReceiverConfiguration(slotCapacity: 100, windowCapacity: 64, receiveSpan: 64)
  static let journal = TransferJournal(
    slot: .b, state: .receiving, size: 100, crc32: 0xC0FF_EE00, version: .zero, committedOffset: 0)

  func checker(onTrial: Bool = false) -> ReceiverInvariantChecker {
    ReceiverInvariantChecker(
      configuration: Self.configuration, runningSlot: .a, runningOnTrial: onTrial, resumedTransfer: nil)
  }

  func journal(committed: UInt32, state: DeviceState = .receiving) -> TransferJournal {
    var journal = Self.journal
    journal.committedOffset = committed
    journal.state = state
    return journal
  }

  /// Asks for `io` and completes it with `result`.
  func io(_ checker: inout ReceiverInvariantChecker, _ io: ReceiverIO, _ result: IOResult = .done) {
    checker.engineAsked(io)
    checker.hostCompleted(io, result)
  }

  /// PREPARE, one window of 64 bytes and one of 36, VALIDATE: what a correct engine asks for.
  func validatedTransfer() -> ReceiverInvariantChecker {
    var checker = checker()
    io(&checker, .prepare(journal(committed: 0)))
    io(&checker, .write(slot: .b, offset: 0, bytes: [UInt8](repeating: 1, count: 64)[...]))
    io(&checker, .checkWindow(slot: .b, offset: 0, length: 64), .crc32(1))
    io(&checker, .commit(journal(committed: 64)))
    io(&checker, .write(slot: .b, offset: 64, bytes: [UInt8](repeating: 1, count: 36)[...]))
    io(&checker, .checkWindow(slot: .b, offset: 64, length: 36), .crc32(1))
    io(&checker, .commit(journal(committed: 100)))
    io(&checker, .checkImage(journal(committed: 100)), .image(.valid))
    io(&checker, .recordValidated(journal(committed: 100, state: .validated)))
    return checker
  }

  @Test func aCorrectTransferPasses() {
    var checker = validatedTransfer()
    io(&checker, .activate(journal(committed: 100, state: .validated), permanent: false))
    checker.engineNotified(Response(.activate, .success).encoded)
    checker.engineAskedRestart()
    checker.engineReports(.idle)
    #expect(checker.violations == [])
  }

  @Test func writingTheRunningSlotIsReported() {
    var checker = checker()
    io(&checker, .prepare(journal(committed: 0)))
    io(&checker, .write(slot: .a, offset: 0, bytes: [1, 2, 3]))
    #expect(checker.violations.map(\.invariant).contains("running slot never written"))
  }

  @Test func preparingTheRunningSlotOrDuringATrialIsReported() {
    var running = checker()
    var journal = journal(committed: 0)
    journal.slot = .a
    io(&running, .prepare(journal))
    #expect(running.violations.map(\.invariant).contains("running slot never prepared"))

    var trial = checker(onTrial: true)
    io(&trial, .prepare(self.journal(committed: 0)))
    #expect(trial.violations.map(\.invariant) == ["fallback slot kept during a trial"])
  }

  @Test func writesOutsideTheReceiveSpanAreReported() {
    var checker = checker()
    io(&checker, .prepare(journal(committed: 0)))
    io(&checker, .write(slot: .b, offset: 60, bytes: [UInt8](repeating: 0, count: 8)[...]))
    #expect(checker.violations.map(\.invariant) == ["writes inside the receive span and the image"])
  }

  @Test func activatingAnUncheckedImageIsReported() {
    var checker = checker()
    io(&checker, .prepare(journal(committed: 0)))
    io(&checker, .activate(journal(committed: 100, state: .validated), permanent: true))
    #expect(checker.violations.map(\.invariant).contains("boot pointer only at a validated image"))
  }

  @Test func aWriteAfterTheCheckVoidsIt() {
    var checker = validatedTransfer()
    #expect(checker.violations == [])
    io(&checker, .write(slot: .b, offset: 0, bytes: [9]))
    io(&checker, .activate(journal(committed: 100, state: .validated), permanent: false))
    #expect(checker.violations.map(\.invariant).contains("boot pointer only at a validated image"))
  }

  @Test func aSecondIOInFlightIsReported() {
    var checker = checker()
    checker.engineAsked(.prepare(journal(committed: 0)))
    checker.engineAsked(.confirm)
    #expect(checker.violations.map(\.invariant) == ["one IO at a time"])
  }

  @Test func aCommitBackwardsOrPastTheWindowIsReported() {
    var checker = checker()
    io(&checker, .prepare(journal(committed: 0)))
    io(&checker, .commit(journal(committed: 65)))
    #expect(checker.violations.map(\.invariant) == ["committed offset moves forward by at most a window"])

    var backwards = self.checker()
    backwards.engineReports(TransferStatus(state: .receiving, size: 100, crc32: 1, committedOffset: 64))
    backwards.engineReports(TransferStatus(state: .receiving, size: 100, crc32: 1, committedOffset: 32))
    #expect(backwards.violations.map(\.invariant) == ["committed offset only moves forward"])
  }

  @Test func badNotificationsAndStrayRestartsAreReported() {
    var checker = checker()
    checker.engineNotified([0x61, 0x01, 0x00])
    checker.engineNotified(Response(.window, .success, .offset(0)).encoded + [0])
    checker.engineAskedRestart()
    #expect(
      checker.violations.map(\.invariant) == [
        "notification decodes", "notification decodes", "restart only after activation",
      ])
  }
}
