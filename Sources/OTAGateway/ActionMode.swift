import OTAChecksum
import OTAWire

/// What the gateway does with a DDI action, read from hawkBit's model: install it now, stage it
/// for a maintenance window, stage it for good (download only), ask the device's consent first, or
/// nothing yet. Documented in docs/FLEET.md ("hawkBit's model and the device's say").
public enum ActionMode: Equatable, Sendable {
  /// Push, activate, verify: the action as goosebit and hawkBit offer it without the modes below
  /// (and a maintenance window that is `available`).
  case install
  /// `maintenanceWindow: unavailable` (hawkBit then says `update: skip`): push and validate, do not
  /// activate; activate once a poll says `available`.
  case stageForWindow
  /// `update: skip` without a maintenance window, hawkBit's DOWNLOAD_ONLY: push and validate, never
  /// activate; the action closes with `execution: downloaded`.
  case downloadOnly
  /// A `confirmationBase` action: stage the image, then ask the device with ACTIVATE; its answer is
  /// the confirmation feedback.
  case confirm
  /// `download: skip`: nothing to do yet (hawkBit does not send it today).
  case notYet

  /// The mode of `deployment`; `confirming` when it came from a `confirmationBase` link.
  public init(_ deployment: DDIDeploymentBase.Deployment, confirming: Bool = false) {
    let window = deployment.maintenanceWindow?.lowercased()
    if confirming {
      self = .confirm
    } else if window == "unavailable" {
      self = .stageForWindow
    } else if deployment.download?.lowercased() == "skip" {
      self = .notYet
    } else if deployment.update?.lowercased() == "skip" {
      self = .downloadOnly
    } else {
      self = .install
    }
  }

  /// The push goes on to ACTIVATE.
  public var activates: Bool { self == .install || self == .confirm }
}

extension TargetFacts {
  /// Whether the device's Info proves it holds `image` of `version` validated and not activated (a
  /// staged image): its state is validated and its transfer's size, CRC32 and version are the
  /// image's. A gateway that finds this after a restart does not push again.
  public func holdsStaged(_ image: [UInt8], version: Version) -> Bool {
    guard info.state == .validated, info.transferVersion == version, Int(info.transfer.size) == image.count
    else { return false }
    var crc = CRC32()
    crc.update(image)
    return crc.value == info.transfer.crc32
  }

  /// The device asks its owner's consent before it activates (Info flag bit 5).
  public var requiresConsent: Bool { info.flags.contains(.consentRequired) }
}
