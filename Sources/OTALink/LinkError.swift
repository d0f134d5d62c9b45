import OTASystem

/// Why the simulated link failed. Every case says what happened in words a person can act on.
public enum LinkError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A system call on the link's socket failed.
  case system(operation: String, errno: Errno)
  /// Nothing listens at the socket path (no device there).
  case noDevice(path: String)
  /// The device already serves another central.
  case deviceBusy
  /// The other side sent bytes that are not a frame of this link.
  case protocolViolation(String)
  /// The connection is gone.
  case disconnected
  /// The peer stopped reading: this many bytes of answers wait for it, the most allowed.
  case peerNotReading(waiting: Int)

  public var description: String {
    switch self {
    case .system(let operation, let errno): "\(operation) failed: \(errno)"
    case .noDevice(let path): "no device at \(path) (is otad running?)"
    case .deviceBusy: "the device is busy with another central"
    case .protocolViolation(let what): "link protocol violation: \(what)"
    case .disconnected: "disconnected"
    case .peerNotReading(let waiting): "it stopped reading: \(waiting) bytes of answers wait for it"
    }
  }
}

extension LinkError {
  /// A system-layer failure as a link error: the call and its path, and the errno.
  public init(_ error: SystemError) {
    let operation =
      error.path.isEmpty || error.path == "socket" ? error.operation : "\(error.operation) \(error.path)"
    self = .system(operation: operation, errno: error.errno)
  }
}
