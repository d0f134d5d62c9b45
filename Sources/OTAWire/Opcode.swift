/// Control-point request opcodes. Values are the wire contract: never renumber.
public enum Opcode: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  case prepare = 0x01
  case status = 0x02
  case window = 0x03
  case validate = 0x04
  case activate = 0x05
  case abort = 0x06
  case confirm = 0x07
  /// Opts in to protocol features the device announces in Info (offset 74).
  case features = 0x08
  /// Asks for a page of the running image's block hashes (Info features bit 2).
  case blockHashes = 0x09
  /// Keeps the validated image's activation for a window of wall-clock time (Info features bit 5).
  case schedule = 0x0A

  /// The first byte of every control-point response.
  public static let responseMarker: UInt8 = 0x60

  public var description: String {
    switch self {
    case .prepare: "PREPARE"
    case .status: "STATUS"
    case .window: "WINDOW"
    case .validate: "VALIDATE"
    case .activate: "ACTIVATE"
    case .abort: "ABORT"
    case .confirm: "CONFIRM"
    case .features: "FEATURES"
    case .blockHashes: "BLOCK HASHES"
    case .schedule: "SCHEDULE"
    }
  }
}
