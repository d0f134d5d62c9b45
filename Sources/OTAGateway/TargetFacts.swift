import OTAWire

/// One device as the gateway knows it from its last conversation with it: who it is (the Device
/// Information Service's serial, model and hardware revision) and its Info. The serial is the
/// device's DDI controller id: the device's own, so every gateway near it names it the same.
public struct TargetFacts: Sendable {
  public var serial: String
  public var model: String
  public var hardwareRevision: String
  public var info: InfoRecord

  public init(serial: String, model: String, hardwareRevision: String, info: InfoRecord) {
    self.serial = serial
    self.model = model
    self.hardwareRevision = hardwareRevision
    self.info = info
  }

  public var controllerId: String { serial }

  /// The version it runs, confirmed or not.
  public var runningVersion: Version { info.runningVersion }
  public var confirmed: Bool { !info.flags.contains(.runningOnTrial) }

  /// DDI config data: the keys goosebit reads (`hw_boardname`, `hw_revision`, `sw_version`) and the
  /// device's own state (slots, last outcome), every value a string as hawkBit stores them.
  public var attributes: [String: String] {
    let outcome = info.lastOutcome
    var attributes = [
      "hw_boardname": model,
      "hw_revision": hardwareRevision,
      "sw_version": "\(runningVersion)",
      "serial": serial,
      "running_slot": "\(info.runningSlot)",
      "confirmed": confirmed ? "yes" : "no, on trial",
      "slot_a_version": "\(info.slotVersions.a)",
      "slot_b_version": "\(info.slotVersions.b)",
      "inactive_slot": "\(info.inactiveSlotContent)",
      "last_update": Self.outcomeText(outcome),
    ]
    if info.flags.contains(.bootStateRebuilt) { attributes["boot_state"] = "rebuilt, provisional" }
    return attributes
  }

  static func outcomeText(_ outcome: UpdateOutcome) -> String {
    switch outcome.result {
    case .none: "none"
    case .succeeded: "\(outcome.from) to \(outcome.to): succeeded"
    case .rolledBack: "\(outcome.from) to \(outcome.to): rolled back (\(outcome.reason))"
    }
  }

  /// The device rolled back from `version`, as its last outcome says: an update to it failed.
  public func rolledBack(from version: Version) -> Bool {
    info.lastOutcome.result == .rolledBack && info.lastOutcome.to == version && runningVersion != version
  }
}
