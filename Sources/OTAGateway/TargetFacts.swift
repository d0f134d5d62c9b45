import OTAChecksum
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

  /// Whether the device's Info proves it runs `image` (the bytes a push would send): its running
  /// image's size and CRC32, as its boot state records them, are the image's. A device that merely
  /// says it runs the version does not prove it: the version is a string any device may send, the
  /// size and CRC32 of a release's image are what only a device that holds the image knows without
  /// the release (still no proof against a device that read the release; docs/SECURITY.md).
  public func provesItRuns(_ image: [UInt8]) -> Bool {
    guard info.runningImageSize > 0, Int(info.runningImageSize) == image.count else { return false }
    var crc = CRC32()
    crc.update(image)
    return crc.value == info.runningImageCRC
  }

  /// The device rolled back from `version`, as its last outcome says: an update to it failed.
  public func rolledBack(from version: Version) -> Bool {
    info.lastOutcome.result == .rolledBack && info.lastOutcome.to == version && runningVersion != version
  }
}
