import OTAWire

/// The feedback of an image staged on the device (validated, not activated): while a maintenance
/// window is closed, and at the end of a download-only action.
extension DDIFeedback {
  /// Said while the maintenance window is `unavailable`: the action stays open.
  public static let waitingForWindow = "staged on the device; waiting for the maintenance window"

  /// The image of `version` is staged; the action waits for its maintenance window.
  public static func stagedForWindow(_ version: Version) -> DDIFeedback {
    DDIFeedback(
      execution: .proceeding, finished: .none,
      details: ["\(waitingForWindow) (\(version) validated, not activated)"])
  }

  /// hawkBit closes a download-only action on `execution: downloaded` (its DDI resource's own tests
  /// send it with `finished: none`): the image of `version` is validated on the device, never
  /// activated.
  public static func downloaded(_ version: Version, _ detail: String) -> DDIFeedback {
    DDIFeedback(
      execution: .downloaded, finished: .none,
      details: ["staged on the device: \(version) validated, not activated (download only)", detail])
  }
}
