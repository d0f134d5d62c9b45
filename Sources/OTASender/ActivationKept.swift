import OTAWire

/// How a push ends when the device keeps the activation of the validated image and carries it
/// out on its own (PROTOCOL.md, Activation: the device has a say).
public enum ActivationKept: Equatable, Sendable {
  /// ACTIVATE was answered `0x0E deferred`: something on the device holds it (an update lock,
  /// consent not given, a postponement); the device activates once nothing does.
  case deferred(ActivationDeferral)
  /// SCHEDULE was answered success: the device activates within this window.
  case scheduled(ActivationWindow)
}
