import OTAWire

/// Nordic's Legacy DFU (the nRF5 SDK's bootloader protocol up to SDK 11, docs/NORDIC-DFU.md): the
/// control point's opcodes, statuses and notifications, as Nordic's bootloader
/// (`dfu_transport_ble.c`) and its clients (nrf-ota, Nordic's DFU libraries) use them. The service's
/// UUIDs are the Bluetooth link's (OTABlueZ's `LegacyDFUUUID`).
public enum LegacyDFU {
  public enum Opcode: UInt8, Sendable {
    case startDFU = 0x01
    case initParameters = 0x02
    case receiveFirmware = 0x03
    case validate = 0x04
    case activateAndReset = 0x05
    case systemReset = 0x06
    case imageSizeRequest = 0x07
    case packetReceiptRequest = 0x08
    /// Notifications: a command's response, and a packet receipt.
    case response = 0x10
    case packetReceipt = 0x11
  }

  public enum Status: UInt8, Sendable {
    case success = 0x01
    case invalidState = 0x02
    case notSupported = 0x03
    case dataSizeExceedsLimit = 0x04
    case crcError = 0x05
    case operationFailed = 0x06
  }

  /// START DFU's image type: only an application (the slots hold one image).
  public static let applicationImage: UInt8 = 0x04

  /// `[0x10, request, status]`.
  public static func response(_ request: Opcode, _ status: Status) -> [UInt8] {
    [Opcode.response.rawValue, request.rawValue, status.rawValue]
  }

  /// `[0x11, bytes received u32]`.
  public static func packetReceipt(_ received: UInt32) -> [UInt8] {
    var bytes = [Opcode.packetReceipt.rawValue]
    bytes.appendU32(received)
    return bytes
  }
}

/// The init packet the Legacy bootloader takes before the firmware (`dfu_init_packet_t`, as
/// adafruit-nrfutil and nrfutil 0.5 write it): device type, device revision, application version,
/// the SoftDevices the firmware needs, then how the firmware is checked: a CRC16 (DFU 0.5, and 0.6's
/// extended packet 0), or its length and SHA-256 (0.7's extended packet 1). 0.8's signed packet
/// (extended packet 2) is refused: its key handling is Secure DFU's business.
public struct LegacyInitPacket: Equatable, Sendable {
  public enum Check: Equatable, Sendable {
    case crc16(UInt16)
    case sha256(length: UInt32, digest: [UInt8])
  }

  public static let anyDevice: UInt16 = 0xFFFF
  public static let anyVersion: UInt32 = 0xFFFF_FFFF
  /// The most bytes an init packet may have (0.8's, the longest, is 12 + 2n + 4 + 4 + 32 + 64).
  public static let maxLength = 256

  public var deviceType: UInt16
  public var deviceRevision: UInt16
  public var applicationVersion: UInt32
  public var softDevices: [UInt16]
  public var check: Check

  public init(
    deviceType: UInt16, deviceRevision: UInt16, applicationVersion: UInt32, softDevices: [UInt16],
    check: Check
  ) {
    self.deviceType = deviceType
    self.deviceRevision = deviceRevision
    self.applicationVersion = applicationVersion
    self.softDevices = softDevices
    self.check = check
  }

  public init(bytes: [UInt8]) throws(WireError) {
    guard bytes.count <= Self.maxLength else { throw .invalidField("an init packet of \(bytes.count) bytes") }
    var reader = ByteReader(bytes)
    deviceType = try reader.readU16()
    deviceRevision = try reader.readU16()
    applicationVersion = try reader.readU32()
    let count = Int(try reader.readU16())
    softDevices = try (0..<count).map { _ throws(WireError) in try reader.readU16() }
    switch reader.remaining {
    case 2:
      check = .crc16(try reader.readU16())
    case 6:
      guard try reader.readU32() == 0 else { throw .invalidField("an extended init packet id") }
      check = .crc16(try reader.readU16())
    default:
      let id = try reader.readU32()
      guard id == 1 else {
        throw .invalidField(id == 2 ? "a signed (DFU 0.8) init packet" : "an extended init packet id \(id)")
      }
      let length = try reader.readU32()
      check = .sha256(length: length, digest: Array(try reader.readBytes(32)))
      try reader.expectEnd()
    }
  }

  /// The version otad records for the image: the application version's four bytes read as
  /// major.minor.revision (0x01020003 is 1.2.3); nil for "any" (0xFFFFFFFF).
  public var version: Version? {
    guard applicationVersion != Self.anyVersion else { return nil }
    return Version(
      major: UInt8(applicationVersion >> 24), minor: UInt8(truncatingIfNeeded: applicationVersion >> 16),
      revision: UInt16(truncatingIfNeeded: applicationVersion))
  }
}

/// CRC-16/CCITT-FALSE (polynomial 0x1021, start 0xFFFF), Nordic's `crc16_compute`, fed in pieces.
public struct CRC16: Equatable, Sendable {
  public private(set) var value: UInt16 = 0xFFFF

  public init() {}

  public mutating func update(_ bytes: some Sequence<UInt8>) {
    var crc = value
    for byte in bytes {
      crc = (crc >> 8 | crc << 8) ^ UInt16(byte)
      crc ^= (crc & 0xFF) >> 4
      crc ^= crc << 12
      crc ^= (crc & 0xFF) << 5
    }
    value = crc
  }

  public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 {
    var crc = CRC16()
    crc.update(bytes)
    return crc.value
  }
}
