import OTASender
import Testing

@testable import OTACentral

/// When `FleetPush` starts the next device's session: below `--parallel`, and only once every
/// running session has reached its transfer (or has been opening for `openingPatience`), so that
/// equal links do not open, transfer and end in step.
@Suite struct FleetPushStartTests {
  static let opening: [SenderPhase] = [.idle, .connecting, .readingInfo, .checkingStatus, .preparing]
  static let past: [SenderPhase] = [
    .transferring, .validating, .activating, .restarting, .verifying, .awaitingConfirmation, .confirming,
    .finished,
  ]

  @Test func theFirstStartsAtOnce() {
    #expect(FleetPush.mayStart(running: [], parallel: 4))
  }

  @Test func aSessionStillOpeningHoldsTheNextBack() {
    for phase in Self.opening {
      #expect(!FleetPush.mayStart(running: [(phase, .milliseconds(300))], parallel: 4), "\(phase)")
      // Among sessions that transfer, one opening is enough to wait.
      let running = [(SenderPhase.transferring, Duration.seconds(5)), (phase, .zero)]
      #expect(!FleetPush.mayStart(running: running, parallel: 4), "\(phase)")
    }
  }

  @Test func onceEverySessionIsPastItsOpeningTheNextStarts() {
    for phase in Self.past {
      #expect(FleetPush.mayStart(running: [(phase, .milliseconds(300))], parallel: 4), "\(phase)")
    }
    let three: [(phase: SenderPhase, since: Duration)] = [
      (.transferring, .seconds(1)), (.validating, .seconds(2)), (.restarting, .milliseconds(10)),
    ]
    #expect(FleetPush.mayStart(running: three, parallel: 4))
  }

  @Test func aSlowOpeningHoldsTheRestBackNoLongerThanThePatience() {
    let patience = FleetPush.openingPatience
    for phase in Self.opening {
      #expect(!FleetPush.mayStart(running: [(phase, patience - .milliseconds(1))], parallel: 4), "\(phase)")
      #expect(FleetPush.mayStart(running: [(phase, patience)], parallel: 4), "\(phase)")
    }
  }

  @Test func neverMoreThanParallel() {
    let four = [(phase: SenderPhase, since: Duration)](repeating: (.transferring, .seconds(3)), count: 4)
    #expect(!FleetPush.mayStart(running: four, parallel: 4))
    #expect(FleetPush.mayStart(running: Array(four.prefix(3)), parallel: 4))
    #expect(!FleetPush.mayStart(running: [(.transferring, .seconds(3))], parallel: 1))
  }
}
