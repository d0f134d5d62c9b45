import OTAWire

/// What kind of image a slot holds, decided by its first four bytes.
public enum ImageKind: Sendable, Equatable {
  /// No MCUboot magic: opaque bytes checked by size and CRC only.
  case raw
  /// An MCUboot image, with the layout decoded from its header and TLV areas.
  case mcuboot(MCUbootImageLayout)
}

/// What a successful verification established about the image in a slot.
public struct ImageReport: Sendable, Equatable {
  public var kind: ImageKind
  /// Bytes verified: the prepared size, which for MCUboot is also the image's own total length.
  public var size: UInt64
  /// CRC32 (zlib) of all `size` bytes.
  public var crc32: UInt32
  /// The MCUboot header's version; for a raw image, the version the sender prepared.
  public var version: Version
  /// SHA-256 of MCUboot's hashed range (equal to the SHA256 TLV); nil for a raw image.
  public var sha256: [UInt8]?
  /// The protected SEC_CNT TLV's value; 0 when the image has none.
  public var securityCounter: UInt32
  /// The trusted key whose signature verified; nil when the policy asks for none.
  public var signedBy: ImagePublicKey?
  /// The SHA-256 of all `size` bytes, when the check was asked to seal them (an activation's).
  public var seal: [UInt8]?
  /// CRC32 of the `size` bytes as the slot holds them: `crc32`, except for an encrypted image
  /// checked as sent whose payload is (partly) decrypted in place.
  public var storedCRC32: UInt32

  public init(
    kind: ImageKind, size: UInt64, crc32: UInt32, version: Version, sha256: [UInt8]?,
    securityCounter: UInt32 = 0, signedBy: ImagePublicKey? = nil, seal: [UInt8]? = nil,
    storedCRC32: UInt32? = nil
  ) {
    self.seal = seal
    self.storedCRC32 = storedCRC32 ?? crc32
    self.kind = kind
    self.size = size
    self.crc32 = crc32
    self.version = version
    self.sha256 = sha256
    self.securityCounter = securityCounter
    self.signedBy = signedBy
  }
}

/// Why the image in a slot must not be activated. Each maps onto the status the device answers.
public enum ImageProblem: Error, Sendable, Equatable, CustomStringConvertible {
  /// The bytes in the slot are not the bytes the sender checksummed: resend.
  case crcMismatch(expected: UInt32, actual: UInt32)
  /// The MCUboot header or TLV areas are inconsistent, or the image is empty.
  case malformed(String)
  /// An MCUboot image without a SHA256 TLV: nothing to check its integrity against.
  case hashMissing
  /// The SHA-256 of the hashed range differs from the SHA256 TLV.
  case hashMismatch
  /// The MCUboot header's version is not the one the sender announced when preparing.
  case versionMismatch(header: Version, prepared: Version)
  /// The MCUboot header and TLV areas describe an image of `described` bytes; `received` arrived.
  case sizeMismatch(described: UInt64, received: UInt64)
  /// Signatures are required and none by a trusted key verifies; the text says what was found.
  case signatureInvalid(String)
  /// The image's version is lower than the confirmed one, and downgrades are not allowed.
  case downgrade(image: Version, installed: Version)
  /// The image's security counter is lower than the highest one this device confirmed.
  case securityCounterBackwards(image: UInt32, floor: UInt32)
  /// The image is encrypted and this device cannot unwrap its key: no device key, a key of another
  /// kind, or one the image was not encrypted for.
  case cannotDecrypt(String)

  public var status: StatusCode {
    switch self {
    case .crcMismatch: .crcMismatch
    case .malformed, .hashMissing, .hashMismatch, .versionMismatch, .sizeMismatch: .validationFailed
    case .signatureInvalid: .signatureInvalid
    case .downgrade, .securityCounterBackwards: .downgradeRefused
    case .cannotDecrypt: .cannotDecrypt
    }
  }

  public var description: String {
    switch self {
    case .crcMismatch(let expected, let actual):
      "CRC32 mismatch: prepared \(hex32(expected)), slot holds \(hex32(actual))"
    case .malformed(let reason): "malformed image: \(reason)"
    case .hashMissing: "MCUboot image has no SHA256 TLV"
    case .hashMismatch: "SHA-256 of the image differs from its SHA256 TLV"
    case .versionMismatch(let header, let prepared):
      "image header says version \(header), the transfer was prepared for \(prepared)"
    case .sizeMismatch(let described, let received):
      "MCUboot header and TLVs describe \(described) bytes, but \(received) were received"
    case .signatureInvalid(let reason): "signature invalid: \(reason)"
    case .downgrade(let image, let installed):
      "downgrade refused: the image is version \(image), lower than the confirmed \(installed)"
    case .securityCounterBackwards(let image, let floor):
      "downgrade refused: the image's security counter \(image) is lower than the device's \(floor)"
    case .cannotDecrypt(let reason): "cannot decrypt: \(reason)"
    }
  }
}

/// The outcome of `ImageVerifier.verify`: storage failures are thrown instead, because they say
/// nothing about the image.
public enum ImageVerdict: Sendable, Equatable {
  case valid(ImageReport)
  case invalid(ImageProblem)
}

/// `0x` and eight hex digits.
func hex32(_ value: UInt32) -> String {
  let text = String(value, radix: 16)
  return "0x" + String(repeating: "0", count: 8 - text.count) + text
}
