import Foundation
import OTAFaults

/// What the page's buttons do, each the way the demo and the tests do it: a push is otactl against
/// the device's socket; a dropped link kills otactl mid-push and starts it again (it resumes); a
/// power cut is SIGKILL to otad and a new start; a flipped byte is written straight into the
/// inactive slot's file; a new loss applies to the push under way (its link is re-made) and the next;
/// a fault (docs/APP-TESTING.md) goes to otad's fault control, as `otad fault add` sends it; a reset
/// makes the device again from nothing. v2 and v3 go whole (`--full`): they are siblings of v1, and
/// without it otactl would copy the blocks the device already has; the delta button sends v2 as its
/// difference from v1 (`--base`). The device's say (an update lock, consent) is in `LabAction+Say`.
enum LabAction: String, CaseIterable {
  case pushV2 = "push-v2"
  case pushV3 = "push-v3"
  case pushUnsigned = "push-unsigned"
  case pushEncrypted = "push-encrypted"
  case pushDelta = "push-delta"
  case pushBig = "push-big"
  case dropLink = "drop-link"
  case powerCut = "power-cut"
  case flipByte = "flip-byte"
  case setLoss = "set-loss"
  case setFault = "set-fault"
  case clearFaults = "clear-faults"
  case reset
  case holdLock = "hold-lock"
  case releaseLock = "release-lock"
  case requireConsent = "require-consent"
  case consentAccept = "consent-accept"
  case consentPostpone = "consent-postpone"
  case consentDecline = "consent-decline"

  /// Carries the action out; what the lab's log says about it.
  func perform(on model: LabModel, body: String, bigImage: String?) throws -> String {
    switch self {
    case .pushV2:
      try model.central.start(
        label: "push v2", image: "firmware-v2.bin", link: model.link.conditions, extra: ["--full"])
      model.pushStarted()
      return "push v2 (2.0.0, signed, passes its self-test), whole (--full)"
    case .pushV3:
      try model.central.start(
        label: "push v3", image: "firmware-v3.bin", link: model.link.conditions, extra: ["--full"])
      model.pushStarted()
      return "push v3 (3.0.0, signed, fails its self-test), whole (--full)"
    case .pushDelta:
      let base = model.device.paths.image("firmware-v1.bin")
      try model.central.start(
        label: "push v2 delta", image: "firmware-v2.bin", link: model.link.conditions,
        extra: ["--base", base])
      model.pushStarted()
      return "push v2 as a delta against v1 (--base firmware-v1.bin)"
    case .pushUnsigned:
      try model.central.start(
        label: "push unsigned", image: "mcuboot-unsigned-4099B.bin", link: model.link.conditions)
      model.pushStarted()
      return "push an MCUboot image without a signature"
    case .pushEncrypted:
      try model.central.start(
        label: "push encrypted", image: model.device.paths.encryptedImage, link: model.link.conditions)
      model.pushStarted()
      return "push v2.1 (2.1.0, signed, encrypted for the device's X25519 key)"
    case .pushBig:
      guard let bigImage else { throw LabError("start ota-lab with --big-image FILE for this one") }
      try model.central.start(label: "push big", image: bigImage, link: model.link.conditions)
      model.pushStarted()
      return "push \(bigImage)"
    case .dropLink:
      guard try model.central.restart() else {
        throw LabError("no push is under way: there is no link to drop")
      }
      return "dropped the link: otactl cut off mid-push and started again"
    case .powerCut:
      model.poweredCut(duringPush: model.central.running)
      try model.device.powerCut()
      return "power cut: otad killed (SIGKILL) and started again"
    case .flipByte:
      let said = try model.device.flipByte()
      model.flipped(duringPush: model.central.running)
      return said
    case .setLoss:
      guard let loss = Double(body.trimmingCharacters(in: .whitespacesAndNewlines)), (0...0.9).contains(loss)
      else {
        throw LabError("a loss between 0 and 0.9, e.g. 0.02")
      }
      model.setLoss(loss)
      let remade = try model.central.restart(link: model.link.conditions)
      return "loss set to \(Int(loss * 100))%" + (remade ? " (the push under way reconnected with it)" : "")
    case .setFault:
      let said = try model.device.faultControl(
        .add(Fault(parsing: body.trimmingCharacters(in: .whitespacesAndNewlines))))
      model.faults(set: true)
      return said
    case .clearFaults:
      let said = try model.device.faultControl(.clear)
      model.faults(set: false)
      return said
    case .reset:
      try model.reset()
      return "reset: the device made again (1.0.0 in slot A, slot B empty, a fresh journal and boot state)"
    case .holdLock, .releaseLock, .requireConsent, .consentAccept, .consentPostpone, .consentDecline:
      return try performSay(on: model)
    }
  }
}
