import OTAEngine
import OTAJournal
import OTAWire

/// One fuzz run: the engine, the model host, the checker, the clock, and the bookkeeping of answers
/// owed to the central. Steps come from `ReceiverFuzzRun+Steps.swift`.
struct ReceiverFuzzRun {
  let configuration: ReceiverConfiguration
  let image: SenderImage
  var engine: ReceiverEngine
  var host: ReceiverModelHost
  var checker: ReceiverInvariantChecker
  var pending: ReceiverIO?
  var now: Duration = .zero
  /// Control writes not answered yet; a disconnect moves them to `mayGoUnanswered`.
  var answersOwed = 0
  var mayGoUnanswered = 0
  var extraViolations: [InvariantViolation] = []
  var windowsCommitted = 0
  /// Every event and action, when tracing (for reading a crasher).
  var trace: [String]?
  var activations = 0

  var violations: [InvariantViolation] { checker.violations + extraViolations }

  init(setup: ReceiverFuzzSetup) {
    configuration = setup.configuration
    image = SenderImage(seed: setup.imageSeed)
    host = ReceiverModelHost(
      slotCapacity: Int(setup.configuration.slotCapacity), bootSlot: setup.runningSlot,
      bootOnTrial: setup.runningOnTrial)
    if let journal = setup.journal {
      let stored = min(Int(journal.committedOffset), Int(setup.configuration.slotCapacity))
      host.store(image.bytes(0..<stored), in: journal.slot, at: 0)
      host.storedJournal = journal.encoded
    }
    let resumed = Self.resumable(host.journalAfterRestart, running: setup.runningSlot, setup.configuration)
    engine = ReceiverEngine(
      configuration: setup.configuration, runningSlot: setup.runningSlot,
      runningOnTrial: setup.runningOnTrial, journal: host.journalAfterRestart)
    // The model's running slot holds a whole slot's bytes: operations may copy from all of it.
    engine.updateRunningImage(size: UInt32(clamping: setup.configuration.slotCapacity))
    checker = ReceiverInvariantChecker(
      configuration: setup.configuration, runningSlot: setup.runningSlot,
      runningOnTrial: setup.runningOnTrial, resumedTransfer: resumed)
    checkResumed(resumed)
  }

  /// What a restarting engine must resume: a journal into the slot that is not running, that fits.
  static func resumable(
    _ journal: TransferJournal?, running: SlotID, _ configuration: ReceiverConfiguration
  ) -> TransferJournal? {
    guard let journal, journal.slot != running, UInt64(journal.size) <= configuration.slotCapacity else {
      return nil
    }
    return journal
  }

  mutating func checkResumed(_ expected: TransferJournal?) {
    if engine.transfer != expected {
      extraViolations.append(
        .init(
          "resume only a journal for the inactive slot",
          "expected \(String(describing: expected)), engine has \(String(describing: engine.transfer))"))
    }
  }

  // MARK: Delivering events

  mutating func deliver(_ event: ReceiverEvent) {
    if case .control = event { answersOwed += 1 }
    var restartAsked = false
    let actions = engine.handle(event)
    trace?.append("\(now) \(event) -> \(actions)")
    for action in actions {
      switch action {
      case .notify(let bytes):
        checker.engineNotified(bytes)
        if bytes.first == MissingReport.marker {
          // A missing-range report (FEATURES bit 0 on) answers no request.
          continue
        } else if answersOwed > 0 {
          answersOwed -= 1
        } else if mayGoUnanswered > 0 {
          mayGoUnanswered -= 1
        } else {
          extraViolations.append(.init("no answer without a request", hex(bytes)))
        }
      case .perform(let io):
        checker.engineAsked(io)
        pending = io
      case .armTimer(let due):
        checker.engineArmedTimer(at: due, now: now)
      case .restart:
        checker.engineAskedRestart()
        restartAsked = true
      }
    }
    checker.engineReports(engine.transferStatus)
    if restartAsked {
      activations += 1
      reboot(applyingPending: false)
    }
  }

  mutating func complete(_ fate: IOFate) {
    guard let io = pending else { return }
    pending = nil
    let result = host.perform(io, fate)
    if case .commit = io, result == .done { windowsCommitted += 1 }
    checker.hostCompleted(io, result, slotUntouched: fate == .fail)
    deliver(.completed(result))
  }

  /// A restart: after ACTIVATE, or a power cut at any instant (the IO in flight done or not).
  mutating func reboot(applyingPending: Bool) {
    trace?.append("restart (IO in flight \(applyingPending ? "done" : "lost")), boot \(host.bootSlot)")
    if let io = pending, applyingPending {
      _ = host.perform(io, .succeed)
      switch io {
      case .prepare(let journal): checker.slotChanged(journal.slot)
      case .write(let slot, _, _): checker.slotChanged(slot)
      default: break
      }
    }
    pending = nil
    answersOwed = 0
    mayGoUnanswered = 0
    let running = host.bootSlot
    let journal = host.journalAfterRestart
    if host.storedJournal != nil, journal == nil {
      extraViolations.append(.init("saved journal reads back", hex(host.storedJournal ?? [])))
    }
    engine = ReceiverEngine(
      configuration: configuration, runningSlot: running, runningOnTrial: host.bootOnTrial, journal: journal)
    engine.updateRunningImage(size: UInt32(clamping: configuration.slotCapacity))
    let resumed = Self.resumable(journal, running: running, configuration)
    checker.restarted(runningSlot: running, runningOnTrial: host.bootOnTrial, resumedTransfer: resumed)
    checkResumed(resumed)
  }

  /// Completes every IO, lets every WINDOW's grace run out, then insists every request was answered:
  /// the protocol never leaves a central hanging.
  mutating func settle() {
    for _ in 0..<512 where pending != nil && violations.isEmpty { complete(.succeed) }
    // With missing-range reports on, a WINDOW reports its gaps at each grace, up to
    // `maxGraceReports` times, before it fails: let every one of those graces run out.
    for _ in 0...configuration.maxGraceReports {
      now += configuration.windowGrace + .milliseconds(1)
      deliver(.tick(now: now))
      for _ in 0..<512 where pending != nil && violations.isEmpty { complete(.succeed) }
    }
    if pending == nil, answersOwed > 0, violations.isEmpty {
      extraViolations.append(.init("every request answered", "\(answersOwed) request(s) never answered"))
    }
  }
}
