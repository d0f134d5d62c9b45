/// Exercise 10, "The device has a say", as the device shows it step by step (no push's exit code
/// counts: otactl's word for a held ACTIVATE is another engineer's to choose). It is done once the
/// lab has seen, in this order: a validated image kept, not activated, because an update lock held
/// it; that version running confirmed, activated by the device on its own; and, with consent
/// required, an image held for the owner's answer, then declined and dropped.
public struct SayExercise: Equatable, Sendable {
  public static let number = 10

  /// The version an update lock held back; nil until seen.
  public private(set) var heldVersion: String?
  /// The held version ran confirmed, with nothing kept any more.
  public private(set) var activatedOnItsOwn = false
  /// After that: an image held for the owner's answer (awaiting consent, or postponed).
  public private(set) var heldForConsent = false
  /// Then the owner declined it and the device dropped it.
  public private(set) var declined = false

  public init() {}

  public var done: Bool { declined }
  /// Begun (a lock held an image back) and not done: the exercise stays open whatever runs.
  public var underWay: Bool { heldVersion != nil && !done }

  /// One look at the device: its say, the running slot's version, whether a trial runs.
  public mutating func observe(_ say: DeviceSay?, running: String?, onTrial: Bool) {
    guard let say else { return }
    if heldVersion == nil {
      if let kept = say.kept, kept.hold == "an update lock" { heldVersion = kept.version }
      return
    }
    if !activatedOnItsOwn {
      activatedOnItsOwn = say.kept == nil && !onTrial && running != nil && running == heldVersion
      return
    }
    if !heldForConsent {
      heldForConsent =
        say.consentRequired && (say.kept?.hold == "awaiting consent" || say.kept?.hold == "postponed")
      return
    }
    if !declined { declined = say.kept == nil && say.answer?.decision == "decline" }
  }
}
