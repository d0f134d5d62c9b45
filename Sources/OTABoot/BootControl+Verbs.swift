import OTAWire

/// The verbs an operator uses on the boot state (`otad mark-good`, `otad mark-bad`), as mcuboot keeps
/// its own in bootutil: what they change and what they found, for the executable to print.
extension BootControl {
  /// What `mark-good` did.
  public enum MarkGood: Equatable, Sendable {
    /// A boot state rebuilt from evidence: its confirmed slot is now confirmed for certain.
    case confirmedProvisional(BootState)
    /// The slot on trial is now the confirmed one.
    case confirmedTrial(BootState)
    /// No trial has begun: nothing changed.
    case nothingToConfirm(BootState)
    /// The trial's slot no longer holds the bytes its activation checked: marked bad instead.
    case sealBroken(String, BootState)
  }

  /// What `mark-bad` did.
  public enum MarkBad: Equatable, Sendable {
    /// The trial's slot is marked bad; the confirmed slot boots next.
    case markedBad(slot: SlotID, after: BootState)
    /// No slot is on trial: the confirmed slot is never marked bad, so nothing changed.
    case noTrial(BootState)
  }

  /// Confirms a provisional (rebuilt) boot state, else the trial that has begun; otherwise changes
  /// nothing.
  public func markGood() throws(BootError) -> MarkGood {
    let before = try current()
    if before.provisional { return .confirmedProvisional(try update { $0.confirmProvisional() }) }
    guard let trial = before.trial, trial.begun else { return .nothingToConfirm(before) }
    var checked = before
    if let why = rollBackBrokenSeal(&checked) {
      return .sealBroken(why, try update { $0.markBad(.sealBroken) })
    }
    return .confirmedTrial(try update { $0.markGood() })
  }

  /// Rejects the slot on trial (the outcome says "marked bad"); changes nothing without a trial.
  public func markBad() throws(BootError) -> MarkBad {
    let before = try current()
    guard let trial = before.trial else { return .noTrial(before) }
    return .markedBad(slot: trial.slot, after: try update { $0.markBad(.markedBad) })
  }
}
