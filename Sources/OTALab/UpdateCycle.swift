import OTAReport

/// The A/B cycle a slot goes through, as the page's diagram draws it: empty → receiving →
/// validated → on trial → good, or bad (rolled back). Derived from otad's status alone (its slots,
/// its trial, its transfer journal), never from a model of the lab's own.
public enum UpdateStage: String, Codable, CaseIterable, Sendable {
  case empty
  case receiving
  case validated
  case onTrial = "on trial"
  case good
  case bad = "bad (rolled back)"

  /// The stage of `slot` in `status`.
  public static func of(slot: String, in status: DeviceStatusReport) -> UpdateStage {
    if status.trial?.slot == slot { return .onTrial }
    if case .journal(let journal) = status.transfer, journal.slot == slot, journal.size > 0 {
      if journal.state == "receiving" { return .receiving }
      if journal.state == "validated" { return .validated }
    }
    switch status.slots.first(where: { $0.slot == slot })?.status {
    case "good"?: return .good
    case "bad"?: return .bad
    case "on trial"?: return .onTrial
    default: return .empty
    }
  }

  /// The slot an update is about, the one the diagram lights: the slot on trial, else the one the
  /// journal writes, else the slot of the last outcome that was not the running one (a rollback
  /// leaves it bad), else the slot that does not run (the next update's target).
  public static func subject(of status: DeviceStatusReport) -> String {
    if let trial = status.trial { return trial.slot }
    if case .journal(let journal) = status.transfer, journal.size > 0 { return journal.slot }
    if status.slots.contains(where: { $0.slot != status.running && $0.status == "bad" }) {
      return status.slots.first { $0.slot != status.running && $0.status == "bad" }?.slot ?? status.running
    }
    if status.lastOutcome.result == "succeeded" { return status.running }
    return status.slots.first { $0.slot != status.running }?.slot ?? status.running
  }
}

/// The diagram's lit state: which slot, at which stage, and every slot's stage.
public struct UpdateCycle: Codable, Equatable, Sendable {
  public var slot: String
  public var stage: UpdateStage
  /// Slot name → its stage's raw value.
  public var slots: [String: String]

  public init(_ status: DeviceStatusReport) {
    slot = UpdateStage.subject(of: status)
    stage = UpdateStage.of(slot: slot, in: status)
    var all: [String: String] = [:]
    for each in status.slots { all[each.slot] = UpdateStage.of(slot: each.slot, in: status).rawValue }
    slots = all
  }
}
