import Foundation
import OTATestSupport
import OTAWire
import Testing

@testable import OTABoot

/// `BootDecision.table` against every input it can see, against the if-chain it replaced, and
/// against the table docs/BOOT.md draws.
@Suite struct BootDecisionTableTests {
  static let factoryVersion = Version(major: 1, minor: 0, revision: 0)

  /// Every state the decision distinguishes: none; each confirmed slot with no trial; and each
  /// confirmed slot with a trial on the other slot, 0 to 3 boots left of 3, with and without a
  /// failed boot on record. (`activate` never arms the confirmed slot, so no trial sits there.)
  static let states: [BootState?] = {
    var states: [BootState?] = [nil]
    for confirmed in SlotID.allCases {
      let plain = BootState.factory(version: factoryVersion, confirmed: confirmed)
      states.append(plain)
      for left in 0...3 {
        for failure in [UpdateOutcome.Reason.none, .healthCheckFailed] {
          var armed = plain
          armed.activate(
            confirmed == .a ? .b : .a, version: Version(major: 2, minor: 0, revision: 0), size: 10, crc32: 1,
            attempts: 3, permanent: false)
          for _ in 0..<(3 - left) { armed.beginAttempt() }
          if failure != .none, left < 3 { armed.failBoot(failure) }
          states.append(armed)
        }
      }
    }
    return states
  }()

  static let reports: [SlotID?] = [nil, .a, .b]

  static var inputs: [(state: BootState?, booted: SlotID?)] {
    states.flatMap { state in reports.map { (state, $0) } }
  }

  @Test func everyInputMatchesExactlyOneRow() {
    for (state, booted) in Self.inputs {
      let matching = BootDecision.table.filter { $0.matches(state, booted: booted) }
      #expect(matching.count == 1, "\(String(describing: state)) booted \(String(describing: booted))")
    }
  }

  @Test func everyRowIsReachable() {
    let reached = Set(
      Self.inputs.map {
        BootDecision.decide($0.state, booted: $0.booted, factoryVersion: Self.factoryVersion).row
      })
    #expect(reached == Set(BootDecision.Row.allCases))
    #expect(BootDecision.table.map(\.row) == BootDecision.Row.allCases, "one rule per row, in order")
  }

  @Test func agreesWithTheIfChainItReplaced() {
    for (state, booted) in Self.inputs {
      let table = BootDecision.decide(state, booted: booted, factoryVersion: Self.factoryVersion)
      let chain = Self.ifChainDecision(state, booted: booted, factoryVersion: Self.factoryVersion)
      #expect(table == chain, "\(String(describing: state)) booted \(String(describing: booted))")
    }
  }

  /// The row, trial, boots left, booted and restart columns of docs/BOOT.md's table are the data's.
  @Test func theDocDrawsThisTable() throws {
    let doc = try String(
      contentsOf: RepositoryRoot.url.appendingPathComponent("docs/BOOT.md"), encoding: .utf8)
    let lines = doc.split(separator: "\n").map(String.init)
    guard let header = lines.firstIndex(where: { $0.hasPrefix("| row | trial | boots left | booted |") })
    else {
      Issue.record("docs/BOOT.md has no boot decision table")
      return
    }
    let rows = lines[(header + 2)...].prefix { $0.hasPrefix("| ") }.map { line in
      line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
    }
    let drawn = rows.map { [$0[0], $0[1], $0[2], $0[3], $0[6]] }
    let data = BootDecision.table.map { rule in
      [
        rule.row.rawValue, rule.trial.rawValue, rule.bootsLeft.rawValue, rule.bootedText,
        rule.restart ? "yes" : "no",
      ]
    }
    #expect(drawn == data)
  }

  /// The decision as it was written before the table (commit b7b098d), kept as the reference.
  static func ifChainDecision(_ current: BootState?, booted: SlotID?, factoryVersion: Version) -> BootDecision
  {
    guard var state = current else {
      let slot = booted ?? .a
      return BootDecision(
        row: .noState, state: .factory(version: factoryVersion, confirmed: slot), run: slot, restart: false)
    }
    let row: BootDecision.Row
    if let trial = state.trial {
      if booted == state.confirmed {
        row = .bootloaderFellBack
      } else if trial.attemptsLeft > 0 {
        row = .trialBoots
      } else {
        row = booted == trial.slot ? .trialExhaustedStillRunning : .trialExhausted
      }
    } else {
      row = booted == nil || booted == state.confirmed ? .confirmedRuns : .bootloaderDisagrees
    }
    switch row {
    case .noState, .confirmedRuns:
      return BootDecision(row: row, state: state, run: state.confirmed, restart: false)
    case .bootloaderDisagrees:
      return BootDecision(row: row, state: state, run: booted ?? state.confirmed, restart: true)
    case .trialBoots:
      state.beginAttempt()
      return BootDecision(row: row, state: state, run: state.running, restart: false)
    case .trialExhausted, .bootloaderFellBack:
      state.rollBackSpentTrial()
      return BootDecision(row: row, state: state, run: state.confirmed, restart: false)
    case .trialExhaustedStillRunning:
      let running = state.trial?.slot ?? state.confirmed
      state.rollBackSpentTrial()
      return BootDecision(row: row, state: state, run: running, restart: true)
    }
  }
}
