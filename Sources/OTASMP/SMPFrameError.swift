/// Why bytes are not an SMP message a server can answer.
public enum SMPFrameError: Error, Equatable, Sendable, CustomStringConvertible {
  /// Fewer than 8 bytes where a header should be.
  case truncatedHeader(count: Int)
  /// The header announces more body than the message (a datagram, or the frame limit) can hold.
  case lengthMismatch(announced: Int, available: Int)
  /// The header announces a body larger than the server takes.
  case tooLarge(announced: Int, limit: Int)

  public var description: String {
    switch self {
    case .truncatedHeader(let count): "\(count) bytes is shorter than an SMP header"
    case .lengthMismatch(let announced, let available):
      "the header announces \(announced) body bytes, \(available) arrived"
    case .tooLarge(let announced, let limit): "the header announces \(announced) body bytes, over \(limit)"
    }
  }
}
