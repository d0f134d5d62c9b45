/// The lab's exercises in the order the page runs them: each names the buttons to press, what it
/// needs, and is open when the device's state (otad's status and the push under way) holds that,
/// else it says what to do first. Done when a push (or a button) showed what it is about; exercise 10
/// when the device showed each of its steps (`SayExercise`).
public struct LabExercise: Codable, Equatable, Sendable {
  public enum State: String, Codable, Sendable {
    case done
    case ready
    case locked
  }

  public var number: Int
  public var title: String
  /// The actions (button ids) it uses.
  public var buttons: [String]
  public var needs: String
  public var state: State
  /// When locked: what to do first.
  public var first: String?

  /// The device as the exercises look at it.
  public struct Device: Equatable, Sendable {
    /// The running slot's version ("2.0.0+0"); nil while unknown (otad off).
    public var running: String?
    public var onTrial: Bool
    /// The push under way ("push v3"), nil when none runs.
    public var pushing: String?
    /// Exercise 10 begun (a lock held an image back) and not done: open whatever runs meanwhile.
    public var sayUnderWay: Bool

    public init(running: String?, onTrial: Bool, pushing: String?, sayUnderWay: Bool = false) {
      self.running = running
      self.onTrial = onTrial
      self.pushing = pushing
      self.sayUnderWay = sayUnderWay
    }

    var idle: Bool { pushing == nil && !onTrial && running != nil }
    func runs(_ version: String) -> Bool { running?.hasPrefix(version + "+") == true || running == version }
  }

  public struct Plan: Sendable {
    let number: Int
    let title: String
    let buttons: [String]
    let needs: String
    let first: String
    let open: @Sendable (Device) -> Bool
  }

  static let factory = "press Reset the device (it goes back to 1.0.0 in slot A)"
  static let v2First = "do exercise 2 first: v2 confirmed"

  public static let plans: [Plan] = [
    Plan(
      number: 1, title: "An unsigned image, refused", buttons: ["push-unsigned"],
      needs: "the factory firmware 1.0.0 running, no push under way", first: factory,
      open: { $0.idle && $0.runs("1.0.0") }),
    Plan(
      number: 2, title: "A clean update over a lossy link, with a drop and a resume",
      buttons: ["set-loss", "push-v2", "drop-link"],
      needs: "1.0.0 running, no push under way", first: factory,
      open: { ($0.idle && $0.runs("1.0.0")) || $0.pushing == "push v2" }),
    Plan(
      number: 3, title: "A downgrade, refused before a byte moves", buttons: ["push-unsigned"],
      needs: "v2 (2.0.0) running confirmed", first: v2First,
      open: { $0.idle && $0.runs("2.0.0") }),
    Plan(
      number: 4, title: "A power cut during the transfer", buttons: ["push-v3", "power-cut"],
      needs: "v2 running confirmed (to push v3 over it)", first: v2First,
      open: { ($0.idle && $0.runs("2.0.0")) || $0.pushing == "push v3" }),
    Plan(
      number: 5, title: "A bad firmware, rolled back", buttons: ["push-v3"],
      needs: "v2 running confirmed", first: v2First,
      open: { ($0.idle && $0.runs("2.0.0")) || $0.pushing == "push v3" }),
    Plan(
      number: 6, title: "A flipped byte, refused at VALIDATE", buttons: ["push-v3", "flip-byte"],
      needs: "v2 running confirmed; press Flip while v3's transfer runs", first: v2First,
      open: { ($0.idle && $0.runs("2.0.0")) || $0.pushing == "push v3" }),
    Plan(
      number: 7, title: "A fault on demand", buttons: ["set-fault", "push-v3", "clear-faults"],
      needs: "v2 running confirmed, no push under way", first: v2First,
      open: { ($0.idle && $0.runs("2.0.0")) || $0.pushing == "push v3" }),
    Plan(
      number: 8, title: "An encrypted image", buttons: ["push-encrypted"],
      needs: "a firmware older than 2.1.0 running, no push under way",
      first: "wait for the push to end, or press Reset the device",
      open: { ($0.idle && ($0.runs("1.0.0") || $0.runs("2.0.0"))) || $0.pushing == "push encrypted" }),
    Plan(
      number: 9, title: "A delta: v2 sent as its difference from v1", buttons: ["reset", "push-delta"],
      needs: "1.0.0 running (the delta's base)", first: factory,
      open: { ($0.idle && $0.runs("1.0.0")) || $0.pushing == "push v2 delta" }),
    Plan(
      number: SayExercise.number, title: "The device has a say",
      buttons: ["hold-lock", "push-v2", "release-lock", "require-consent", "push-v3", "consent-decline"],
      needs: "1.0.0 running, no push under way (after exercise 9: Reset the device)", first: factory,
      open: { ($0.idle && $0.runs("1.0.0")) || $0.pushing == "push v2" || $0.sayUnderWay }),
  ]

  /// Every exercise's state for `device`, given those done.
  public static func list(_ device: Device, done: Set<Int>) -> [LabExercise] {
    plans.map { plan in
      let isDone = done.contains(plan.number)
      let open = plan.open(device)
      return LabExercise(
        number: plan.number, title: plan.title, buttons: plan.buttons, needs: plan.needs,
        state: isDone ? .done : open ? .ready : .locked, first: isDone || open ? nil : plan.first)
    }
  }

  /// The exercise a push's end completes: its label, exit code, whether it resumed after a power
  /// cut of the lab's, and whether a byte was flipped or a fault set during or before it.
  public static func completed(
    label: String, exitCode: Int, resumedAfterPowerCut: Bool, flipped: Bool, faultSet: Bool
  ) -> [Int] {
    var numbers: [Int] = []
    switch (label, exitCode) {
    case ("push unsigned", 11): numbers.append(1)
    case ("push v2", 0): numbers.append(2)
    case ("push unsigned", 12): numbers.append(3)
    case ("push v3", 7): numbers.append(5)
    case ("push encrypted", 0): numbers.append(8)
    case ("push v2 delta", 0): numbers.append(9)
    default: break
    }
    if resumedAfterPowerCut, label == "push v3" { numbers.append(4) }
    if flipped, exitCode != 0 { numbers.append(6) }
    if faultSet, exitCode != 0, !flipped { numbers.append(7) }
    return numbers
  }
}
