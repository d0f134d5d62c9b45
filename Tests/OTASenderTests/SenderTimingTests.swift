import OTAChecksum
import Testing

@testable import OTASender
@testable import OTAWire

/// docs/PROTOCOL.md, "Timing", as otactl's sender keeps it: how long it waits for each request's
/// answer, how long it reconnects after ACTIVATE, and how soon it gives up on a busy device.
@Suite struct SenderTimingTests {
  typealias Fixture = SenderEngineTests
  var fixture = Fixture()

  static func isConnect(_ action: SenderAction) -> Bool { if case .connect = action { true } else { false } }

  /// Lets time pass to `waited` after `start` with no answer: true when the sender has given up on
  /// the request by then (it disconnects to start over).
  mutating func gaveUp(after waited: Duration, since start: Duration) -> Bool {
    fixture.now = start + waited
    return fixture.feed(.tick(now: fixture.now)).contains(.disconnect)
  }

  /// The sender waits exactly `limit` for the answer it is waiting for now.
  mutating func waits(_ limit: Duration, sourceLocation: SourceLocation = #_sourceLocation) {
    let start = fixture.now
    #expect(!gaveUp(after: limit - .milliseconds(1), since: start), sourceLocation: sourceLocation)
    #expect(gaveUp(after: limit, since: start), sourceLocation: sourceLocation)
  }

  @Test mutating func statusAndFeaturesAreQuickRequests() {
    // [P-TIME-2]
    #expect(Fixture.controls(fixture.connect()) == [.status])
    waits(.seconds(5))
    var features = Fixture()
    #expect(
      Fixture.controls(features.connect(info: SenderMissingRangesTests.info(features: .missingRanges)))
        == [.features(.missingRanges)])
    fixture = features
    waits(.seconds(5))
  }

  @Test mutating func prepareMayTakeSixtySeconds() {
    // [P-TIME-4]
    _ = fixture.connect()
    let actions = fixture.answer(Response(.status, .success, .status(.idle)))
    #expect(Fixture.controls(actions) == [.prepare(size: 1000, crc32: Fixture.crc, version: Fixture.version)])
    waits(.seconds(60))
  }

  @Test mutating func aWindowIsWaitedForFiveSecondsFromItsSending() {
    // [P-TIME-5]
    _ = fixture.connect()
    _ = fixture.answer(Response(.status, .success, .status(.idle)))
    _ = fixture.answer(Response(.prepare, .success, .prepared(windowCapacity: 256, maxChunkPayload: 240)))
    // Credit for the first window's chunks: its WINDOW follows its last chunk.
    let actions = fixture.feed(.writable(count: 10, now: fixture.now))
    #expect(Fixture.controls(actions).contains { if case .window = $0 { true } else { false } })
    waits(.seconds(5))
  }

  @Test mutating func validateMayTakeSixtySeconds() {
    // [P-TIME-6] [P-TIME-9]
    _ = fixture.connect()
    let status = TransferStatus(state: .receiving, size: 1000, crc32: Fixture.crc, committedOffset: 1000)
    #expect(Fixture.controls(fixture.answer(Response(.status, .success, .status(status)))) == [.validate])
    waits(.seconds(60))
  }

  @Test mutating func activateMayTakeSixtySecondsAsItChecksTheImageAgain() {
    // [P-TIME-7] [P-TIME-9]
    fixture.validated()
    let start = fixture.now
    #expect(!gaveUp(after: .seconds(59), since: start))
  }

  @Test mutating func confirmInAPushIsAQuickRequest() {
    // [P-TIME-3]
    var confirming = SenderAlreadyThereTests(SenderConfiguration(version: Fixture.version, confirm: true))
    #expect(Fixture.controls(confirming.connect(info: SenderAlreadyThereTests.runningOnTrial)) == [.confirm])
    let start = confirming.now
    confirming.now = start + .milliseconds(4999)
    #expect(!confirming.sender.handle(.tick(now: confirming.now)).contains(.disconnect))
    confirming.now = start + .seconds(5)
    #expect(confirming.sender.handle(.tick(now: confirming.now)).contains(.disconnect))
  }

  @Test mutating func afterActivateTheSenderReconnectsForSixtySecondsNotEightAttempts() {
    // [P-TIME-10] [P-PHASE-10]
    fixture.validated()
    _ = fixture.answer(Response(.activate, .success))
    let answered = fixture.now
    var actions = fixture.feed(.disconnected(now: fixture.now))
    var attempts = 0
    var outcome: SenderOutcome?
    while outcome == nil, attempts < 100 {
      guard case .connect(let delay)? = actions.first(where: Self.isConnect) else {
        fixture.now += .milliseconds(100)
        actions = fixture.feed(.tick(now: fixture.now))
        outcome = Fixture.finished(actions)
        continue
      }
      attempts += 1
      fixture.now += delay
      // The loop's timer fires (the restart deadline is one of its deadlines), then the connect fails.
      actions = fixture.feed(.tick(now: fixture.now))
      outcome = Fixture.finished(actions)
      guard outcome == nil else { break }
      actions = fixture.feed(.connectFailed(reason: "the device is restarting", now: fixture.now))
      outcome = Fixture.finished(actions)
    }
    #expect(attempts > 8, "more than an ordinary reconnect's 8 attempts")
    #expect(fixture.now - answered >= .seconds(60), "it gave up only after 60 s")
    #expect(fixture.now - answered < .seconds(66), "and not much later: its backoff is at most 5 s")
    #expect(outcome == .failed(.timedOut(.restarting), fixture.sender.report))
  }

  @Test mutating func aBusyDeviceIsAskedAgainForTenSecondsWhateverTheAttemptsAllow() {
    // [P-TIME-13] [P-PHASE-13]
    fixture.sender = SenderEngine(
      image: Fixture.image,
      configuration: SenderConfiguration(version: Fixture.version, maxConnectAttempts: 2))
    _ = fixture.feed(.start(now: fixture.now))
    var waited: Duration = .zero
    var attempts = 0
    var outcome: SenderOutcome?
    while outcome == nil {
      attempts += 1
      let actions = fixture.feed(.deviceBusy(now: fixture.now))
      for case .connect(let delay) in actions {
        waited += delay
        fixture.now += delay
      }
      outcome = Fixture.finished(actions)
    }
    // Two attempts would give up after 0.1 s; a busy device is asked again past the hello timeout.
    #expect(attempts > 2 && waited >= .seconds(10), "\(attempts) attempts in \(waited)")
    #expect(waited < .seconds(16), "and given up soon after: the backoff is at most 5 s")
    guard case .failed(.deviceBusy, _)? = outcome else {
      Issue.record("\(String(describing: outcome))")
      return
    }
  }

}
