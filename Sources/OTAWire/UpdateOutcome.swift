/// The last update's outcome as Info reports it. Raw values are the wire contract: never renumber.
public struct UpdateOutcome: Equatable, Sendable {
  public enum Result: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case none = 0
    case succeeded = 1
    case rolledBack = 2

    public var description: String {
      switch self {
      case .none: "none"
      case .succeeded: "succeeded"
      case .rolledBack: "rolled back"
      }
    }
  }

  /// Why an update was rolled back.
  public enum Reason: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case none = 0
    case healthCheckFailed = 1
    case healthCheckTimedOut = 2
    case didNotStart = 3
    case markedBad = 4
    /// The slot's bytes were no longer those checked at activation (its seal): never booted, or
    /// never confirmed.
    case sealBroken = 5

    public var description: String {
      switch self {
      case .none: "none"
      case .healthCheckFailed: "health check failed"
      case .healthCheckTimedOut: "health check timed out"
      case .didNotStart: "did not start"
      case .markedBad: "marked bad"
      case .sealBroken: "its slot changed after it was checked"
      }
    }
  }

  public var result: Result
  public var from: Version
  public var to: Version
  public var reason: Reason
  /// Trial boots the new image took (0 for a permanent activation).
  public var attemptsUsed: UInt8

  public init(result: Result, from: Version, to: Version, reason: Reason, attemptsUsed: UInt8 = 0) {
    self.result = result
    self.from = from
    self.to = to
    self.reason = reason
    self.attemptsUsed = attemptsUsed
  }

  public static let none = UpdateOutcome(result: .none, from: .zero, to: .zero, reason: .none)
}

/// What the inactive slot holds, as Info reports it. Never renumber.
public enum SlotContent: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  case unknown = 0
  case receiving = 1
  case validated = 2
  case pendingTrial = 3
  case good = 4
  case bad = 5

  public var description: String {
    switch self {
    case .unknown: "unknown"
    case .receiving: "receiving"
    case .validated: "validated"
    case .pendingTrial: "pending trial"
    case .good: "good"
    case .bad: "bad"
    }
  }
}
