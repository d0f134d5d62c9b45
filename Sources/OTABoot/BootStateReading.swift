/// The boot state as read, and how it was come by.
public struct BootStateReading: Equatable, Sendable {
  /// The state to act on: the one on record, or one rebuilt from evidence.
  public var state: BootState
  /// What is on record now (after a rebuilt state was saved), nil when nothing usable is.
  public var saved: BootState?
  /// Copies that failed their checks and were moved aside now (`NAME.damaged`).
  public var movedAside: [String]
  /// Set when the state was rebuilt from evidence.
  public var recovery: BootStateRecovery?

  public init(state: BootState, saved: BootState?, movedAside: [String], recovery: BootStateRecovery?) {
    self.state = state
    self.saved = saved
    self.movedAside = movedAside
    self.recovery = recovery
  }
}
