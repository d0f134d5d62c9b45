import OTAWire

/// hawkBit's confirmation answered by the device (docs/FLEET.md): the gateway stages the image and
/// asks with ACTIVATE; what the device says is what the server is told. Pure: the gateway talks.
public enum ConfirmationDecision {
  /// What the device said to the gateway's ACTIVATE of the staged image.
  public enum DeviceAnswer: Equatable, Sendable {
    /// ACTIVATE was taken and the device runs `version` after its restart.
    case activated(Version)
    /// The device already runs `version` (its running image proven the artifact's): it activated
    /// the kept activation on its own once nothing held it (its owner agreed, a lock went).
    case activatedOnItsOwn(Version)
    /// ACTIVATE was taken, but the update did not hold (a rollback, another version after the
    /// restart, no verdict in time), in the gateway's words: the device agreed; the deployment that
    /// follows the confirmation reports the failure.
    case activatedButFailed(Version, String)
    /// `0x0E deferred`: the device keeps the activation; something holds it.
    case deferred(ActivationDeferral)
    /// `0x0F declined`: the owner declined this version; the device dropped the image.
    case declined
    /// The device refused the image (a verdict at VALIDATE or ACTIVATE), in its words.
    case refused(StatusCode, String)
  }

  /// What the gateway does with the action.
  public enum Step: Equatable, Sendable {
    /// POST this on the confirmation feedback (`confirmed` or `denied`).
    case answer(DDIConfirmationFeedback)
    /// Nothing is sent; ask the device again at a poll at least this many seconds from now (0: the
    /// next poll).
    case askAgain(afterSeconds: UInt32, reason: String)
  }

  public static func step(for answer: DeviceAnswer) -> Step {
    switch answer {
    case .activated(let version):
      .answer(
        DDIConfirmationFeedback(
          .confirmed, code: Int(StatusCode.success.rawValue),
          details: ["the device agreed: ACTIVATE of the staged \(version) was taken; it runs \(version)"]))
    case .activatedOnItsOwn(let version):
      .answer(
        DDIConfirmationFeedback(
          .confirmed, code: Int(StatusCode.success.rawValue),
          details: [
            "the device agreed: it activated the staged \(version) on its own once nothing held it; it runs \(version)"
          ]))
    case .activatedButFailed(let version, let reason):
      .answer(
        DDIConfirmationFeedback(
          .confirmed, code: Int(StatusCode.success.rawValue),
          details: ["the device agreed: ACTIVATE of the staged \(version) was taken, but \(reason)"]))
    case .deferred(let deferral):
      .askAgain(
        afterSeconds: deferral.askAgainAfter,
        reason: "the device deferred the activation (\(deferral.reason))"
          + (deferral.askAgainAfter > 0 ? ", ask again in \(deferral.askAgainAfter) s" : ""))
    case .declined:
      .answer(
        DDIConfirmationFeedback(
          .denied, code: Int(StatusCode.declined.rawValue),
          details: ["the device's owner declined this version: the device dropped the staged image"]))
    case .refused(let status, let words):
      .answer(
        DDIConfirmationFeedback(
          .denied, code: Int(status.rawValue), details: ["the device refused the image: \(words)"]))
    }
  }

  /// A device that asks no consent (Info flag bit 5 clear): the gateway confirms on its behalf.
  public static func onBehalf(of serial: String) -> DDIConfirmationFeedback {
    DDIConfirmationFeedback(
      .confirmed, code: Int(StatusCode.success.rawValue),
      details: [
        "confirmed by the gateway on the device's behalf: \(serial) asks no consent before it activates (Info flag bit 5 clear)"
      ])
  }
}
