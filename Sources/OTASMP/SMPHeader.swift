/// The 8-byte header in front of every SMP message (Zephyr's "SMP protocol specification"):
///
///     byte 0: reserved (3 bits) | version (2 bits) | operation (3 bits)
///     byte 1: flags   2-3: body length (big-endian)   4-5: group (big-endian)
///     byte 6: sequence   7: command id
public struct SMPHeader: Equatable, Sendable {
  public static let byteCount = 8

  public var operation: SMPOperation
  /// 0 is SMP version 1 (errors as `rc`), 1 is version 2 (group errors as `err: {group, rc}`).
  public var version: UInt8
  public var flags: UInt8
  public var length: UInt16
  public var group: UInt16
  public var sequence: UInt8
  public var command: UInt8

  public init(
    operation: SMPOperation, version: UInt8 = 1, flags: UInt8 = 0, length: UInt16, group: UInt16,
    sequence: UInt8, command: UInt8
  ) {
    self.operation = operation
    self.version = version
    self.flags = flags
    self.length = length
    self.group = group
    self.sequence = sequence
    self.command = command
  }

  /// Decodes the first 8 bytes; the body is not looked at.
  public init(bytes: some Collection<UInt8>) throws(SMPFrameError) {
    guard bytes.count >= Self.byteCount else { throw .truncatedHeader(count: bytes.count) }
    let b = Array(bytes.prefix(Self.byteCount))
    operation = SMPOperation(rawValue: b[0] & 0x07)
    version = (b[0] >> 3) & 0x03
    flags = b[1]
    length = UInt16(b[2]) << 8 | UInt16(b[3])
    group = UInt16(b[4]) << 8 | UInt16(b[5])
    sequence = b[6]
    command = b[7]
  }

  public var encoded: [UInt8] {
    [
      (version & 0x03) << 3 | operation.rawValue & 0x07, flags, UInt8(length >> 8),
      UInt8(truncatingIfNeeded: length), UInt8(group >> 8), UInt8(truncatingIfNeeded: group), sequence,
      command,
    ]
  }
}

/// The header's operation: what the message is. A raw value outside 0...3 is kept, and answered.
public struct SMPOperation: RawRepresentable, Equatable, Hashable, Sendable, CustomStringConvertible {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue & 0x07 }

  public static let read = SMPOperation(rawValue: 0)
  public static let readResponse = SMPOperation(rawValue: 1)
  public static let write = SMPOperation(rawValue: 2)
  public static let writeResponse = SMPOperation(rawValue: 3)

  public var isRequest: Bool { self == .read || self == .write }

  /// The operation of the answer to a request.
  public var response: SMPOperation { self == .read ? .readResponse : .writeResponse }

  public var description: String {
    switch self {
    case .read: "read"
    case .readResponse: "read response"
    case .write: "write"
    case .writeResponse: "write response"
    default: "operation \(rawValue)"
    }
  }
}
