import OTAEngine
import OTAReceiverHost
import OTASystem
import OTAWire

/// The activation the device keeps, in the daemon's loop: looked at every second while there is
/// one, carried out (and the device restarted) once nothing holds it; what holds it is logged when
/// it changes, not every second.
extension DeviceService {
  static let activationLookInterval = Duration.seconds(1)

  /// When the loop must wake for the kept activation: nil while there is none.
  var activationDeadline: Duration? {
    guard host.keptActivation != nil else { return nil }
    return nextActivationLook ?? now
  }

  /// Looks at the kept activation when it is due; true when the device restarts into it.
  func lookAtKeptActivation() throws -> Bool {
    guard host.keptActivation != nil else {
      nextActivationLook = nil
      return false
    }
    if let due = nextActivationLook, now < due { return false }
    nextActivationLook = now + Self.activationLookInterval
    switch try host.activateKeptIfDue() {
    case .nothing:
      return false
    case .held(let reason, let detail):
      say("the kept activation waits (\(reason)): \(detail)", notice: false, event: "held", hold: reason)
      return false
    case .declined(let version):
      say(
        "the device's owner declined \(version): the staged image was dropped", notice: true,
        event: "declined", version: version)
      return false
    case .lapsed(let version):
      say(
        "the window for \(version) passed: its kept activation lapsed; the image stays validated",
        notice: true, event: "lapsed", version: version)
      return false
    case .failed(let why):
      say("the kept activation failed: \(why)", notice: true, event: "failed")
      return false
    case .activated(let journal, let overrode):
      let why =
        overrode.map {
          "; \($0) would have held it, but a security update is held at most the maximum deferral"
        } ?? ""
      say(
        "the kept activation of \(journal.version) was carried out\(why)", notice: true, event: "activating",
        version: journal.version)
      restartReason = "the kept activation: \(host.boot.plan)"
      logger.notice("restarting into \(host.boot.plan)")
      observe(.restart(reason: restartReason))
      link.disconnect()
      return true
    }
  }

  /// A line about the kept activation, logged and observed once until what it says changes; the owner's
  /// notify command (`[activation] notify`) is told each change, so the device's application can
  /// tell its user that an update is available, waits, or went ahead.
  private func say(
    _ line: String, notice: Bool, event: String, hold: ActivationHoldReason? = nil, version: Version? = nil
  ) {
    // Said again only when what it is changes, not its words (a countdown changes every second).
    let what = "\(event) \(hold.map(Self.word) ?? "-") \(version.map { "\($0)" } ?? "-")"
    guard what != lastActivationLine else { return }
    lastActivationLine = what
    if notice { logger.notice("\(line)") } else { logger.info("\(line)") }
    observe(.activation(line))
    notifyOwner(event: event, hold: hold, version: version ?? host.keptActivation?.version, detail: line)
  }

  /// Starts the notify command (not waited for; reaped at the next look). One at a time: a change
  /// while the last one still runs is not told.
  private func notifyOwner(event: String, hold: ActivationHoldReason?, version: Version?, detail: String) {
    if let running = activationNotifier, (try? running.exitIfEnded()) == nil { return }
    activationNotifier = nil
    guard let command = activationNotify else { return }
    var environment = ProcessEnvironment.entries.filter { !$0.hasPrefix("OTAD_") }
    environment += [
      "OTAD_ACTIVATION=\(event)", "OTAD_HOLD=\(hold.map(Self.word) ?? "none")",
      "OTAD_VERSION=\(version.map { "\($0)" } ?? "")",
      "OTAD_SECURITY=\(host.keptActivation?.security == true ? 1 : 0)", "OTAD_DETAIL=\(detail)",
    ]
    do {
      activationNotifier = try Spawn("/bin/sh", arguments: ["-c", command], environment: environment).start()
    } catch {
      logger.warning("the notify command could not start: \(error)")
    }
  }

  /// The hold reason as one word, for the notify command's OTAD_HOLD.
  static func word(_ reason: ActivationHoldReason) -> String {
    switch reason {
    case .none: "none"
    case .locked: "locked"
    case .awaitingConsent: "awaiting-consent"
    case .postponed: "postponed"
    case .beforeWindow: "before-window"
    }
  }
}
