import OTAWire

/// What a bootloader must be told, derived from the boot state: the slot it boots normally, and a
/// slot armed for a trial boot with the boots it may still take. A slot named by neither must not
/// boot (it is empty, being written, or bad).
public struct BootPlan: Equatable, Sendable, CustomStringConvertible {
  public struct Trial: Equatable, Sendable {
    public var slot: SlotID
    /// Boots the trial may still take (at least 1 while armed).
    public var attemptsLeft: Int

    public init(slot: SlotID, attemptsLeft: Int) {
      self.slot = slot
      self.attemptsLeft = attemptsLeft
    }
  }

  /// The confirmed slot: what boots when no trial is armed, and what a failed trial falls back to.
  public var primary: SlotID
  public var trial: Trial?

  public init(primary: SlotID, trial: Trial? = nil) {
    self.primary = primary
    self.trial = trial
  }

  /// The slot that runs on the next start.
  public var next: SlotID { trial?.slot ?? primary }

  public var description: String {
    if let trial { "trial \(trial.slot) (\(trial.attemptsLeft) left), else \(primary)" } else { "\(primary)" }
  }
}
