/// Why a key could not be read or used. The text says what to do about it.
public enum KeyError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Not a PEM block at all.
  case notPEM(String)
  /// A well-formed key of a kind this project does not sign or verify with.
  case unsupported(String)
  /// A PEM block of the right label whose DER bytes are not a key.
  case malformed(String)

  public var description: String {
    switch self {
    case .notPEM(let reason): "not a PEM key: \(reason)"
    case .unsupported(let reason): "unsupported key: \(reason)"
    case .malformed(let reason): "malformed key: \(reason)"
    }
  }
}
