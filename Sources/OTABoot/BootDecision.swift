import OTAWire

/// The boot stage's decision, as a table (mcuboot's `boot_swap_tables` is the model): what the state
/// says and what the bootloader reports it started pick exactly one row of `table`; the row says
/// which slot runs, how the state changes, and whether the device must restart at once. docs/BOOT.md
/// draws the table.
///
/// `booted` is the slot the bootloader reports it started, or nil when otad's boot stage is itself the
/// bootloader (the file backend) and simply chooses.
public struct BootDecision: Equatable, Sendable {
  public enum Row: String, CaseIterable, Sendable {
    /// No usable boot state (missing, or every copy damaged): a factory state around the booted slot.
    case noState = "no boot state"
    /// No trial: the confirmed slot runs.
    case confirmedRuns = "confirmed slot runs"
    /// No trial, yet the bootloader started the other slot (a pointer update was cut short): point it
    /// at the confirmed slot again and restart into it.
    case bootloaderDisagrees = "bootloader started the unconfirmed slot"
    /// A trial with boots left: one boot begins.
    case trialBoots = "trial boot"
    /// A trial with no boots left, never confirmed: roll back (for its last failure, or "did not start").
    case trialExhausted = "trial out of boots"
    /// As above while the bootloader still started the trial slot: roll back and restart.
    case trialExhaustedStillRunning = "trial out of boots, still started"
    /// A trial is armed but the bootloader started the confirmed slot (the trial never came up, or the
    /// bootloader spent its own tries): roll back.
    case bootloaderFellBack = "bootloader fell back"
  }

  public var row: Row
  /// The state to persist (equal to the input when nothing changes).
  public var state: BootState
  /// The slot that runs now: the one the bootloader started when it says, else the chosen one.
  public var run: SlotID
  /// The bootloader started a slot the state no longer wants: restart once the plan is applied.
  public var restart: Bool
  /// How the state was read, when `BootControl` made the decision (for the log).
  public var reading: BootStateReading? = nil
  /// Why the armed trial was rolled back before the decision: its slot no longer matched its seal.
  public var brokenSeal: String? = nil

  /// The first row of `table` that holds for `current` and `booted`, applied.
  public static func decide(_ current: BootState?, booted: SlotID?, factoryVersion: Version) -> BootDecision {
    // The rows cover every case (a test enumerates them); should that ever break, the confirmed
    // slot runs unchanged.
    let rule = table.first { $0.matches(current, booted: booted) } ?? table[1]
    return apply(rule, to: current, booted: booted, factoryVersion: factoryVersion)
  }

  /// The table's right half: what a row does to the state, and which slot runs.
  static func apply(
    _ rule: BootDecisionRule, to current: BootState?, booted: SlotID?, factoryVersion: Version
  ) -> BootDecision {
    guard var state = current else {
      let slot = booted ?? .a
      return BootDecision(
        row: rule.row, state: .factory(version: factoryVersion, confirmed: slot), run: slot,
        restart: rule.restart)
    }
    // Read before the change: a rollback ends the trial.
    let trialSlot = state.trial?.slot ?? state.confirmed
    switch rule.change {
    case .factory:
      state = .factory(version: factoryVersion, confirmed: booted ?? .a)
    case .none:
      break
    case .oneBootCounted:
      state.beginAttempt()
    case .rolledBack:
      state.rollBackSpentTrial()
    }
    let run: SlotID
    switch rule.runs {
    case .bootedElseA: run = booted ?? .a
    case .confirmed: run = state.confirmed
    case .booted: run = booted ?? state.confirmed
    case .trialSlot: run = trialSlot
    }
    return BootDecision(row: rule.row, state: state, run: run, restart: rule.restart)
  }
}
