import OTAWire

/// The boot stage's decision, as a table (mcuboot's `boot_swap_tables` is the model): what the state
/// says and what the bootloader reports it started pick exactly one row; the row says which slot runs,
/// how the state changes, and whether the device must restart at once. docs/BOOT.md draws the table.
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

  public static func decide(_ current: BootState?, booted: SlotID?, factoryVersion: Version) -> BootDecision {
    guard var state = current else {
      let slot = booted ?? .a
      return BootDecision(
        row: .noState, state: .factory(version: factoryVersion, confirmed: slot), run: slot, restart: false)
    }
    let row = classify(state, booted: booted)
    switch row {
    case .noState:
      preconditionFailure("classified only without a state")
    case .confirmedRuns:
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
      // The row exists only with a trial; the confirmed slot stands in should that ever change.
      let running = state.trial?.slot ?? state.confirmed
      state.rollBackSpentTrial()
      return BootDecision(row: row, state: state, run: running, restart: true)
    }
  }

  /// The table's left half: which row a state and a bootloader report fall in.
  static func classify(_ state: BootState, booted: SlotID?) -> Row {
    guard let trial = state.trial else {
      return booted == nil || booted == state.confirmed ? .confirmedRuns : .bootloaderDisagrees
    }
    if booted == state.confirmed { return .bootloaderFellBack }
    if trial.attemptsLeft > 0 { return .trialBoots }
    return booted == trial.slot ? .trialExhaustedStillRunning : .trialExhausted
  }
}
