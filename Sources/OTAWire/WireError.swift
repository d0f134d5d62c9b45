/// Why a byte sequence could not be decoded. Each case maps onto one protocol status code.
public enum WireError: Error, Equatable, Sendable {
  /// Fewer bytes than the field needs.
  case truncated(needed: Int, available: Int)
  /// More bytes than a fixed-size record holds.
  case trailingBytes(count: Int)
  /// An opcode this protocol version does not define.
  case unknownOpcode(UInt8)
  /// A field whose value is outside its allowed set or range.
  case invalidField(String)
  /// A structure (an image header, a TLV area) that is internally inconsistent.
  case malformed(String)

  /// The decoder's message without the case name, for errors that wrap it ("malformed image: …").
  public var reason: String {
    switch self {
    case .malformed(let message), .invalidField(let message): message
    case .truncated(let needed, let available): "needed \(needed) bytes, only \(available) available"
    case .trailingBytes(let count): "\(count) unexpected trailing bytes"
    case .unknownOpcode(let opcode): "unknown opcode \(opcode)"
    }
  }

  /// The status a device answers when a request fails to decode this way.
  public var status: StatusCode {
    switch self {
    case .truncated, .trailingBytes: .invalidLength
    case .unknownOpcode: .unknownOpcode
    case .invalidField, .malformed: .invalidParameter
    }
  }
}
