/// Why the gateway will not push what a server offered. Each is said in the gateway's log and,
/// where the action is the target's, in its closing feedback; nothing is pushed.
public enum GatewayRefusal: Error, Equatable, Sendable, CustomStringConvertible {
  /// The deployment's artifact cannot be taken (no link, no usable hash, a size out of range).
  case artifact(String)
  /// The downloaded bytes are not what the server said (size, hash).
  case download(String)
  /// The artifact is no SWUpdate file of ours (archive, sw-description, image).
  case format(String)
  /// The artifact is for other hardware than the device's.
  case hardware(String)

  public var description: String {
    switch self {
    case .artifact(let reason): "refused the deployment: \(reason)"
    case .download(let reason): "refused the download: \(reason)"
    case .format(let reason): "refused the artifact: \(reason)"
    case .hardware(let reason): "refused the artifact: \(reason)"
    }
  }
}
