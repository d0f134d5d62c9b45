/// The status byte of every control-point response. Values are the wire contract: never renumber.
public enum StatusCode: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  case success = 0x00
  case unknownOpcode = 0x01
  case invalidLength = 0x02
  case invalidState = 0x03
  case invalidParameter = 0x04
  case tooLarge = 0x05
  case crcMismatch = 0x06
  case missingData = 0x07
  case validationFailed = 0x08
  case signatureInvalid = 0x09
  case downgradeRefused = 0x0A
  case storageError = 0x0B
  case busy = 0x0C
  /// The image is encrypted and the device cannot open it: it has no decryption key, or the image's
  /// AES key is wrapped for another kind of key or for another device.
  case cannotDecrypt = 0x0D
  /// ACTIVATE was not carried out now: something on the device holds it (an update lock, consent
  /// not yet given, a postponement, a window not yet open). The device keeps the request and
  /// activates on its own once nothing holds it; the payload says why and when to ask again.
  case deferred = 0x0E
  /// The device's owner declined this update (`otad consent --decline`): the image was dropped.
  case declined = 0x0F

  public var description: String {
    switch self {
    case .success: "success"
    case .unknownOpcode: "unknown opcode"
    case .invalidLength: "invalid length"
    case .invalidState: "invalid state"
    case .invalidParameter: "invalid parameter"
    case .tooLarge: "too large for the slot"
    case .crcMismatch: "CRC mismatch"
    case .missingData: "missing data"
    case .validationFailed: "validation failed"
    case .signatureInvalid: "signature invalid"
    case .downgradeRefused: "downgrade refused"
    case .storageError: "storage error"
    case .busy: "busy"
    case .cannotDecrypt: "cannot decrypt"
    case .deferred: "deferred"
    case .declined: "declined by the device's owner"
    }
  }
}

/// The device's transfer state as STATUS and Info report it. Never renumber.
public enum DeviceState: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  case idle = 0
  case preparing = 1
  case receiving = 2
  case validated = 3
  case activating = 4

  public var description: String {
    switch self {
    case .idle: "idle"
    case .preparing: "preparing"
    case .receiving: "receiving"
    case .validated: "validated"
    case .activating: "activating"
    }
  }
}
