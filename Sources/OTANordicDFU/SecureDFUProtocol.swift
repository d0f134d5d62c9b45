import OTAWire

/// Nordic's Secure DFU (the nRF5 SDK 12 and later bootloader's BLE protocol, docs/NORDIC-DFU.md): the
/// control point's opcodes, result codes and extended errors as `nrf_dfu_req_handler.h` and
/// `nrf_dfu_types.h` number them and nrfutil's `dfu_transport_ble.py` reads them. The service's UUIDs
/// are the Bluetooth link's (OTABlueZ's `SecureDFUUUID`).
public enum SecureDFU {
  public enum Opcode: UInt8, Sendable {
    case protocolVersion = 0x00
    case create = 0x01
    case setReceiptNotification = 0x02
    case calculateChecksum = 0x03
    case execute = 0x04
    case select = 0x06
    case mtuGet = 0x07
    case write = 0x08
    case ping = 0x09
    case hardwareVersion = 0x0A
    case firmwareVersion = 0x0B
    case abort = 0x0C
    /// The first byte of every notification.
    case response = 0x60
  }

  public enum Result: UInt8, Sendable {
    case invalid = 0x00
    case success = 0x01
    case opcodeNotSupported = 0x02
    case invalidParameter = 0x03
    case insufficientResources = 0x04
    case invalidObject = 0x05
    case unsupportedType = 0x07
    case operationNotPermitted = 0x08
    case operationFailed = 0x0A
    /// An extended error follows in the next byte.
    case extendedError = 0x0B
  }

  /// `nrf_dfu_ext_error_code_t`: why an init packet or an image was refused, when a result code alone
  /// does not say it.
  public enum ExtendedError: UInt8, Sendable {
    case wrongCommandFormat = 0x02
    case unknownCommand = 0x03
    case initCommandInvalid = 0x04
    case firmwareVersionFailure = 0x05
    case hardwareVersionFailure = 0x06
    case softDeviceVersionFailure = 0x07
    case signatureMissing = 0x08
    case wrongHashType = 0x09
    case hashFailed = 0x0A
    case wrongSignatureType = 0x0B
    case verificationFailed = 0x0C
    case insufficientSpace = 0x0D
  }

  /// Why the device refused an init packet or the firmware, as Nordic's bootloader answers it
  /// (`nrf_dfu_validation.c`): a result code, and for 0x0B its extended error.
  public struct Refusal: Error, Equatable, Sendable {
    public let result: Result
    public let extended: ExtendedError?

    public init(_ result: Result) {
      self.result = result
      extended = nil
    }

    public init(_ extended: ExtendedError) {
      result = .extendedError
      self.extended = extended
    }

    /// The notification that answers `request` with it.
    public func answer(_ request: UInt8) -> [UInt8] {
      extended.map { SecureDFU.response(request, $0) } ?? SecureDFU.response(request, result)
    }
  }

  public enum ObjectType: UInt8, Sendable {
    case command = 0x01
    case data = 0x02
  }

  /// The Secure DFU protocol version PROTOCOL_VERSION reports (SDK 15's).
  public static let protocolVersionNumber: UInt8 = 1
  /// The largest init packet (`INIT_COMMAND_MAX_SIZE`), and a data object's size: a flash page.
  public static let commandMaxSize: UInt32 = 512
  public static let dataObjectMaxSize: UInt32 = 4096

  /// `[0x60, request, result, payload...]`.
  public static func response(_ request: UInt8, _ result: Result, _ payload: [UInt8] = []) -> [UInt8] {
    [Opcode.response.rawValue, request, result.rawValue] + payload
  }

  /// `[0x60, request, 0x0B, extended error]`.
  public static func response(_ request: UInt8, _ error: ExtendedError) -> [UInt8] {
    [Opcode.response.rawValue, request, Result.extendedError.rawValue, error.rawValue]
  }

  /// CALCULATE CHECKSUM's answer (and the packet receipt): the offset and the CRC32 of everything so far.
  public static func checksum(offset: UInt32, crc: UInt32) -> [UInt8] {
    var payload: [UInt8] = []
    payload.appendU32(offset)
    payload.appendU32(crc)
    return response(Opcode.calculateChecksum.rawValue, .success, payload)
  }

  /// SELECT's answer: the object's largest size, then as CALCULATE CHECKSUM.
  public static func selected(maxSize: UInt32, offset: UInt32, crc: UInt32) -> [UInt8] {
    var payload: [UInt8] = []
    payload.appendU32(maxSize)
    payload.appendU32(offset)
    payload.appendU32(crc)
    return response(Opcode.select.rawValue, .success, payload)
  }
}
