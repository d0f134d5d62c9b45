import OTAWire

/// The boot decision's table as data: each row's conditions (is there a state, a trial, boots left,
/// what the bootloader reports it started) and what it decides (which slot runs, how the state
/// changes, whether to restart). `BootDecision.decide` takes the first row that matches; the rows
/// are also disjoint, and every one is reachable (`BootDecisionTableTests`). docs/BOOT.md draws the
/// same table, column by column.
public struct BootDecisionRule: Sendable, Equatable {
  /// Whether there is a boot state, and a trial in it.
  public enum TrialCondition: String, Sendable, CaseIterable {
    case noBootState = "—"
    case noTrial = "none"
    case trial = "T"
  }

  /// The trial's boots left.
  public enum BootsLeft: String, Sendable, CaseIterable {
    /// No trial to count.
    case notApplicable = "—"
    case some = "> 0"
    case none = "0"
    case any = "any"

    func matches(_ left: UInt8) -> Bool {
      switch self {
      case .notApplicable, .any: true
      case .some: left > 0
      case .none: left == 0
      }
    }
  }

  /// What the bootloader reported it started, relative to the state.
  public enum Booted: Sendable, CaseIterable {
    /// It tells nothing (otad's file backend is the bootloader itself).
    case notReported
    case confirmed
    /// The slot that is not the confirmed one: with a trial, the trial's slot (T).
    case unconfirmed

    init(_ booted: SlotID?, confirmed: SlotID) {
      self = booted.map { $0 == confirmed ? .confirmed : .unconfirmed } ?? .notReported
    }
  }

  /// The slot that runs.
  public enum Runs: Sendable {
    /// The slot the bootloader started, else A (no boot state).
    case bootedElseA
    case confirmed
    /// The slot the bootloader started, which is not the confirmed one.
    case booted
    /// The trial's slot.
    case trialSlot
  }

  /// How the state changes.
  public enum Change: Sendable {
    /// A factory state around the slot that runs.
    case factory
    case none
    /// One trial boot begins.
    case oneBootCounted
    /// The trial is marked bad and rolled back ("did not start").
    case rolledBack
  }

  public var row: BootDecision.Row
  public var trial: TrialCondition
  public var bootsLeft: BootsLeft
  /// The bootloader reports this row accepts.
  public var booted: Set<Booted>
  public var runs: Runs
  public var change: Change
  public var restart: Bool

  /// Whether this row holds for a state (nil: none) and a bootloader report.
  func matches(_ state: BootState?, booted slot: SlotID?) -> Bool {
    guard let state else { return trial == .noBootState }
    let reported = Booted(slot, confirmed: state.confirmed)
    guard let armed = state.trial else { return trial == .noTrial && booted.contains(reported) }
    return trial == .trial && bootsLeft.matches(armed.attemptsLeft) && booted.contains(reported)
  }

  /// The `booted` column as docs/BOOT.md writes it.
  public var bootedText: String {
    if booted == Set(Booted.allCases) { return "any" }
    let names: [(Booted, String)] = [
      (.notReported, "nil"), (.confirmed, "confirmed"),
      (.unconfirmed, trial == .trial ? "T" : "the other slot"),
    ]
    return names.filter { booted.contains($0.0) }.map(\.1).joined(separator: " or ")
  }
}

extension BootDecision {
  /// The rows, in docs/BOOT.md's order; the first that matches decides.
  public static let table: [BootDecisionRule] = [
    BootDecisionRule(
      row: .noState, trial: .noBootState, bootsLeft: .notApplicable,
      booted: Set(BootDecisionRule.Booted.allCases),
      runs: .bootedElseA, change: .factory, restart: false),
    BootDecisionRule(
      row: .confirmedRuns, trial: .noTrial, bootsLeft: .notApplicable, booted: [.notReported, .confirmed],
      runs: .confirmed, change: .none, restart: false),
    BootDecisionRule(
      row: .bootloaderDisagrees, trial: .noTrial, bootsLeft: .notApplicable, booted: [.unconfirmed],
      runs: .booted, change: .none, restart: true),
    BootDecisionRule(
      row: .trialBoots, trial: .trial, bootsLeft: .some, booted: [.notReported, .unconfirmed],
      runs: .trialSlot, change: .oneBootCounted, restart: false),
    BootDecisionRule(
      row: .trialExhausted, trial: .trial, bootsLeft: .none, booted: [.notReported],
      runs: .confirmed, change: .rolledBack, restart: false),
    BootDecisionRule(
      row: .trialExhaustedStillRunning, trial: .trial, bootsLeft: .none, booted: [.unconfirmed],
      runs: .trialSlot, change: .rolledBack, restart: true),
    BootDecisionRule(
      row: .bootloaderFellBack, trial: .trial, bootsLeft: .any, booted: [.confirmed],
      runs: .confirmed, change: .rolledBack, restart: false),
  ]
}
