import OTAWire

/// A request a fault can be due on: an OTA control-point request (by its opcode), an SMP command
/// (by its group and command id), a Legacy or a Secure DFU command (by its opcode). Named in a
/// fault's line as `at=NAME`.
public enum FaultRequest: Equatable, Hashable, Sendable {
  case ota(Opcode)
  case smp(SMPCommandName)
  case nordic(NordicCommandName)
  case secureDFU(SecureDFUCommandName)

  /// Secure DFU's control point's commands (docs/NORDIC-DFU.md), by their opcode.
  public enum SecureDFUCommandName: String, CaseIterable, Sendable, NordicControlPointCommand {
    case select = "sdfu-select"
    case create = "sdfu-create"
    case receiptNotification = "sdfu-prn"
    case checksum = "sdfu-checksum"
    case execute = "sdfu-execute"

    public var opcode: UInt8 {
      switch self {
      case .select: 0x06
      case .create: 0x01
      case .receiptNotification: 0x02
      case .checksum: 0x03
      case .execute: 0x04
      }
    }
  }

  /// The Legacy DFU control point's commands (docs/NORDIC-DFU.md), by their opcode.
  public enum NordicCommandName: String, CaseIterable, Sendable, NordicControlPointCommand {
    case start = "dfu-start"
    case initParameters = "dfu-init"
    case receive = "dfu-receive"
    case validate = "dfu-validate"
    case activate = "dfu-activate"

    public var opcode: UInt8 {
      switch self {
      case .start: 0x01
      case .initParameters: 0x02
      case .receive: 0x03
      case .validate: 0x04
      case .activate: 0x05
      }
    }
  }

  /// The SMP commands an app's DFU flow sends (Zephyr's image and OS management groups).
  public enum SMPCommandName: String, CaseIterable, Sendable {
    case state = "smp-state"
    case upload = "smp-upload"
    case erase = "smp-erase"
    case echo = "smp-echo"
    case reset = "smp-reset"

    /// Group and command id (Zephyr's `MGMT_GROUP_ID_IMAGE` 1, `MGMT_GROUP_ID_OS` 0).
    public var groupAndID: (group: UInt16, id: UInt8) {
      switch self {
      case .state: (1, 0)
      case .upload: (1, 1)
      case .erase: (1, 5)
      case .echo: (0, 0)
      case .reset: (0, 5)
      }
    }

    public init?(group: UInt16, id: UInt8) {
      guard let name = Self.allCases.first(where: { $0.groupAndID == (group, id) }) else { return nil }
      self = name
    }
  }

  public var isSMP: Bool {
    if case .smp = self { return true }
    return false
  }

  public var isNordic: Bool {
    if case .nordic = self { return true }
    return false
  }

  public var isSecureDFU: Bool {
    if case .secureDFU = self { return true }
    return false
  }

  /// `prepare`, `window`, `block-hashes`, ..., `smp-upload`, `smp-reset`, ...
  public var name: String {
    switch self {
    case .ota(let opcode): opcode.description.lowercased().replacingSpaces
    case .smp(let command): command.rawValue
    case .nordic(let command): command.rawValue
    case .secureDFU(let command): command.rawValue
    }
  }

  public init?(name: String) {
    if let command = SMPCommandName(rawValue: name) {
      self = .smp(command)
    } else if let command = NordicCommandName(rawValue: name) {
      self = .nordic(command)
    } else if let command = SecureDFUCommandName(rawValue: name) {
      self = .secureDFU(command)
    } else if let opcode = Opcode.allCases.first(where: { FaultRequest.ota($0).name == name }) {
      self = .ota(opcode)
    } else {
      return nil
    }
  }

  /// Every name `at=` takes, for a complaint.
  public static var names: [String] {
    Opcode.allCases.map { FaultRequest.ota($0).name } + SMPCommandName.allCases.map(\.rawValue)
      + NordicCommandName.allCases.map(\.rawValue) + SecureDFUCommandName.allCases.map(\.rawValue)
  }
}

extension String {
  fileprivate var replacingSpaces: String { String(map { $0 == " " ? "-" : $0 }) }
}

/// A Nordic DFU control point's command as a fault names it, found by its opcode.
public protocol NordicControlPointCommand: CaseIterable {
  var opcode: UInt8 { get }
}

extension NordicControlPointCommand {
  public init?(opcode: UInt8) {
    guard let name = Self.allCases.first(where: { $0.opcode == opcode }) else { return nil }
    self = name
  }
}
