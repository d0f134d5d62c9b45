/// The buttons of the device's say (docs/OTAD.md, "The device has a say"): hold or release the
/// lab's update lock, require the owner's consent or stop (otad started again with or without
/// `--require-consent`, as a power cut starts it), and answer as the owner with `otad consent`.
extension LabAction {
  func performSay(on model: LabModel) throws -> String {
    let device = model.device
    switch self {
    case .holdLock: return try device.holdLock()
    case .releaseLock: return try device.releaseLock()
    case .requireConsent:
      if model.central.running {
        throw LabError("a push is under way: wait for it to end, then change what the device requires")
      }
      let required = !device.requiresConsent
      try device.requireConsent(required)
      return required
        ? "otad started again with --require-consent: a validated update now waits for the owner's answer"
        : "otad started again without --require-consent: a validated update activates unless a lock holds it"
    case .consentAccept: return try device.consent("accept")
    case .consentPostpone: return try device.consent("postpone", ["--for", "1min"])
    case .consentDecline: return try device.consent("decline")
    default: throw LabError("\(rawValue) is not one of the device's say")
    }
  }
}
