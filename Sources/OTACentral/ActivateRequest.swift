import OTASender
import OTAWire

/// `otactl activate`: for the image already validated on the device (pushed with
/// `--no-activate`, or one whose activation the device keeps), the request to send and what its
/// answer means. Pure: the command does the talking. Documented in docs/OTACTL.md.
public enum ActivateRequest {
  /// Why no request goes: said before anything is sent.
  public enum Refusal: Error, Equatable, Sendable {
    /// The device holds no validated image (its state).
    case nothingValidated(DeviceState)
    /// A window was asked of a device that takes no SCHEDULE (Info features bit 5).
    case schedulingUnsupported

    public var exitStatus: OtactlExitCode { .refused }

    public var explanation: String {
      switch self {
      case .nothingValidated(let state):
        "nothing to activate: the device holds no validated image (its state: \(state)). Push one with "
          + "--no-activate (or let a push end deferred) first; nothing was sent."
      case .schedulingUnsupported: PushFailure.schedulingUnsupported.explanation
      }
    }
  }

  /// ACTIVATE, or SCHEDULE with `window` (whose `permanent` is the command's), for the device Info
  /// describes.
  public static func request(for info: InfoRecord, window: ActivationWindow?, permanent: Bool)
    -> Result<Request, Refusal>
  {
    guard info.state == .validated else { return .failure(.nothingValidated(info.state)) }
    guard let window else { return .success(.activate(permanent: permanent)) }
    guard info.features.contains(.scheduledActivation) else { return .failure(.schedulingUnsupported) }
    return .success(
      .schedule(
        ActivationWindow(notBefore: window.notBefore, notAfter: window.notAfter, permanent: permanent)))
  }

  /// What the answer to `request` means.
  public enum Ending: Equatable, Sendable {
    /// ACTIVATE succeeded: the device restarts into `version`.
    case activated(Version)
    case kept(ActivationKept)
    case failed(PushFailure)

    public var exitStatus: OtactlExitCode {
      switch self {
      case .activated: .success
      case .kept(let kept): kept.exitStatus
      case .failed(let failure): failure.exitStatus
      }
    }

    public var explanation: String {
      switch self {
      case .activated(let version):
        "activated: the device restarts into \(version)"
      case .kept(let kept): kept.explanation
      case .failed(let failure): failure.explanation
      }
    }
  }

  /// The answer as the push reads it (SenderEngine: ACTIVATE and SCHEDULE's answers).
  public static func ending(of request: Request, answer: Response, info: InfoRecord) -> Ending {
    switch (request, answer.status, answer.payload) {
    case (.activate, .success, _): .activated(info.transferVersion)
    case (.schedule(let window), .success, _): .kept(.scheduled(window))
    case (.activate, .deferred, .deferral(let deferral)): .kept(.deferred(deferral))
    case (_, .declined, _): .failed(.declined)
    case (.schedule, .unknownOpcode, _): .failed(.schedulingUnsupported)
    case (.activate, let status, _) where SenderEngine.imageVerdicts.contains(status):
      .failed(.validationFailed(status))
    default: .failed(.refused(request.opcode, answer.status))
    }
  }
}
