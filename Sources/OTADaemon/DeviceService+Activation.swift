import OTAEngine
import OTAReceiverHost
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
      say("the kept activation waits (\(reason)): \(detail)", notice: false)
      return false
    case .declined(let version):
      say("the device's owner declined \(version): the staged image was dropped", notice: true)
      return false
    case .lapsed(let version):
      say(
        "the window for \(version) passed: its kept activation lapsed; the image stays validated",
        notice: true)
      return false
    case .failed(let why):
      say("the kept activation failed: \(why)", notice: true)
      return false
    case .activated(let journal, let overrode):
      let why =
        overrode.map {
          "; \($0) would have held it, but a security update is held at most the maximum deferral"
        } ?? ""
      say("the kept activation of \(journal.version) was carried out\(why)", notice: true)
      restartReason = "the kept activation: \(host.boot.plan)"
      logger.notice("restarting into \(host.boot.plan)")
      observe(.restart(reason: restartReason))
      link.disconnect()
      return true
    }
  }

  /// A line about the kept activation, logged and observed once until it changes.
  private func say(_ line: String, notice: Bool) {
    guard line != lastActivationLine else { return }
    lastActivationLine = line
    if notice { logger.notice("\(line)") } else { logger.info("\(line)") }
    observe(.activation(line))
  }
}
