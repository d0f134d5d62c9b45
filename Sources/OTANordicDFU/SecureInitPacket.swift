import Crypto
import OTAWire

/// Secure DFU's init packet as Nordic's `nrfutil pkg generate` writes it (`dfu-cc.proto`'s `Packet`):
/// a `Command` whose `InitCommand` says which firmware follows (type, versions, the SoftDevices it
/// needs, its size, its SHA-256). The signature (ECDSA P-256 over SHA-256) covers the `InitCommand`'s
/// bytes as they stand in the packet, as nrfutil signs them and Nordic's bootloader checks them.
/// nrfutil writes the signature's r and s and the firmware's hash little-endian, as the nRF's crypto
/// reads them.
public struct SecureInitPacket: Sendable {
  public enum FirmwareType: UInt64, Sendable {
    case application = 0
    case softDevice = 1
    case bootloader = 2
    case softDeviceAndBootloader = 3
    case externalApplication = 4
  }

  /// `SignatureType`: only ECDSA P-256 with SHA-256 is taken.
  public static let ecdsaP256SHA256: UInt64 = 0
  /// `HashType.SHA256`.
  public static let sha256HashType: UInt64 = 3
  /// `sd_req`'s "any SoftDevice" (nrfutil's 0xFFFE), and "none" (0x00: an application that needs none).
  public static let anySoftDevice: UInt32 = 0xFFFE
  public static let noSoftDevice: UInt32 = 0x00

  /// The serialized `Command`, and its `InitCommand`: what the signature covers.
  public let command: [UInt8]
  public let initCommand: [UInt8]
  public let signature: (type: UInt64, bytes: [UInt8])?
  public let firmwareVersion: UInt32?
  public let hardwareVersion: UInt32?
  public let softDeviceRequirements: [UInt32]
  public let type: UInt64
  public let softDeviceSize: UInt32
  public let bootloaderSize: UInt32
  public let applicationSize: UInt32
  public let hashType: UInt64?
  /// The firmware's digest as the packet carries it (SHA-256: little-endian).
  public let hash: [UInt8]
  public let isDebug: Bool

  /// Decodes the packet. One protobuf cannot read, with both a signed and an unsigned command, or
  /// without an INIT command, is INVALID OBJECT, as Nordic's bootloader answers it.
  public init(bytes: [UInt8]) throws(SecureDFU.Refusal) {
    do {
      let packet = try ProtobufFields(bytes[...])
      if let signed = packet.bytes(2) {
        let fields = try ProtobufFields(signed)
        guard packet.bytes(1) == nil, let command = fields.bytes(1), let type = fields.varint(2),
          let signature = fields.bytes(3)
        else { throw SecureDFU.Refusal(.invalidObject) }
        self.command = Array(command)
        self.signature = (type, Array(signature))
      } else if let command = packet.bytes(1) {
        self.command = Array(command)
        signature = nil
      } else {
        throw SecureDFU.Refusal(.invalidObject)
      }
      let command = try ProtobufFields(self.command[...])
      guard command.varint(1) == 1, let initBytes = command.bytes(2) else {
        throw SecureDFU.Refusal(.invalidObject)
      }
      initCommand = Array(initBytes)
      let fields = try ProtobufFields(initBytes)
      func u32(_ number: UInt32) throws(SecureDFU.Refusal) -> UInt32? {
        guard let value = fields.varint(number) else { return nil }
        guard value <= UInt64(UInt32.max) else { throw SecureDFU.Refusal(.invalidObject) }
        return UInt32(value)
      }
      firmwareVersion = try u32(1)
      hardwareVersion = try u32(2)
      softDeviceRequirements = try fields.varints(3).map { UInt32(truncatingIfNeeded: $0) }
      type = fields.varint(4) ?? FirmwareType.application.rawValue
      softDeviceSize = try u32(5) ?? 0
      bootloaderSize = try u32(6) ?? 0
      applicationSize = try u32(7) ?? 0
      if let hash = fields.bytes(8) {
        let hashFields = try ProtobufFields(hash)
        hashType = hashFields.varint(1)
        self.hash = Array(hashFields.bytes(2) ?? [])
      } else {
        hashType = nil
        hash = []
      }
      isDebug = (fields.varint(9) ?? 0) != 0
    } catch let refusal as SecureDFU.Refusal {
      throw refusal
    } catch {
      throw SecureDFU.Refusal(.invalidObject)
    }
  }

  /// The version otad records for the image, as Legacy DFU's: the four bytes as major.minor.revision
  /// (0x02000000 is 2.0.0); nil when the packet has none.
  public var version: Version? {
    firmwareVersion.map {
      Version(
        major: UInt8($0 >> 24), minor: UInt8(truncatingIfNeeded: $0 >> 16),
        revision: UInt16(truncatingIfNeeded: $0))
    }
  }

  /// The firmware's SHA-256 as a digest reads (big-endian), when the packet has one.
  public var sha256: [UInt8]? {
    hashType == Self.sha256HashType && hash.count == 32 ? hash.reversed() : nil
  }

  /// What the device takes (docs/NORDIC-DFU.md): a packet signed by `key`, for an application, for
  /// this hardware (when set), needing no SoftDevice (or any), with a SHA-256, that fits the slot.
  /// Checked in the order, and refused with the answers, of Nordic's bootloader
  /// (`nrf_dfu_validation.c`, `nrf_dfu_ver_validation.c`): the signature first (none: extended
  /// 0x08; not ECDSA P-256: 0x0B; the wrong length: OPERATION FAILED; not the key's: INVALID
  /// OBJECT), then the type, the hardware, the SoftDevice, the hash's type, the size.
  public func check(key: P256.Signing.PublicKey, hardwareVersion expected: UInt32?, slotCapacity: UInt64)
    throws(SecureDFU.Refusal)
  {
    guard let signature else { throw SecureDFU.Refusal(.signatureMissing) }
    guard signature.type == Self.ecdsaP256SHA256 else { throw SecureDFU.Refusal(.wrongSignatureType) }
    guard signature.bytes.count == 64 else { throw SecureDFU.Refusal(.operationFailed) }
    guard
      let ecdsa = try? P256.Signing.ECDSASignature(
        rawRepresentation: Array(signature.bytes[0..<32].reversed())
          + Array(signature.bytes[32..<64].reversed())),
      key.isValidSignature(ecdsa, for: initCommand)
    else { throw SecureDFU.Refusal(.invalidObject) }
    guard type == FirmwareType.application.rawValue, softDeviceSize == 0, bootloaderSize == 0 else {
      throw SecureDFU.Refusal(.initCommandInvalid)
    }
    if let expected, hardwareVersion != expected { throw SecureDFU.Refusal(.hardwareVersionFailure) }
    guard
      softDeviceRequirements.contains(Self.noSoftDevice)
        || softDeviceRequirements.contains(Self.anySoftDevice)
    else { throw SecureDFU.Refusal(.softDeviceVersionFailure) }
    guard sha256 != nil else { throw SecureDFU.Refusal(.wrongHashType) }
    guard applicationSize > 0 else { throw SecureDFU.Refusal(.initCommandInvalid) }
    guard UInt64(applicationSize) <= slotCapacity else { throw SecureDFU.Refusal(.insufficientResources) }
  }
}
