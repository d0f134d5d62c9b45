import OTAWire

extension SenderEngine {
  /// What goes after VALIDATE: SCHEDULE with the configured window, or ACTIVATE.
  var activationRequest: Request {
    guard let window = configuration.schedule else { return .activate(permanent: configuration.permanent) }
    return .schedule(
      ActivationWindow(
        notBefore: window.notBefore, notAfter: window.notAfter, permanent: configuration.permanent))
  }

  /// SCHEDULE's answer: the device keeps the activation for the window (success), cannot take
  /// one (`0x01`: a device without features bit 5), or refuses the window (`0x04`: it has ended
  /// by the device's clock). Busy or a storage error is asked again through STATUS, as ACTIVATE is.
  mutating func handleScheduleAnswer(_ response: Response, _ out: inout [SenderAction]) {
    deadline = nil
    activationSent = false
    switch response.status {
    case .success:
      guard case .schedule(let window) = activationRequest else { return }
      finish(kept: .scheduled(window), &out)
    case .unknownOpcode:
      finish(.schedulingUnsupported, &out)
    case .declined:
      finish(.declined, &out)
    case .busy, .storageError:
      retryLater(.schedule, response.status, &out)
    default:
      finish(.refused(.schedule, response.status), &out)
    }
  }
}
