/// An MCUboot TLV type (`IMAGE_TLV_*` in MCUboot's `bootutil/include/bootutil/image.h`).
/// A struct over the raw number rather than an enum so that types this code does not know
/// (vendor TLVs 0xXXa0–0xXXfe, future ones) decode, re-encode and compare like any other.
public struct MCUbootTLVType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
  public let rawValue: UInt16
  public init(rawValue: UInt16) { self.rawValue = rawValue }

  /// SHA-256 of the public key that signed the image.
  public static let keyHash = Self(rawValue: 0x01)
  /// The whole public key (imgtool `--public-key-format full`).
  public static let publicKey = Self(rawValue: 0x02)
  /// SHA-256 of the hashed range: header, payload and protected TLVs.
  public static let sha256 = Self(rawValue: 0x10)
  public static let sha384 = Self(rawValue: 0x11)
  public static let sha512 = Self(rawValue: 0x12)
  public static let rsa2048PSS = Self(rawValue: 0x20)
  /// No longer supported by MCUboot; named so that it is recognized and refused, not ignored.
  public static let ecdsa224 = Self(rawValue: 0x21)
  /// ECDSA signature (P-256 or P-384), DER-encoded; `IMAGE_TLV_ECDSA_SIG`, once `ECDSA256`.
  public static let ecdsaSignature = Self(rawValue: 0x22)
  public static let rsa3072PSS = Self(rawValue: 0x23)
  public static let ed25519 = Self(rawValue: 0x24)
  /// Marks a signature made over the image itself instead of its digest.
  public static let signaturePure = Self(rawValue: 0x25)
  public static let encryptedRSA2048 = Self(rawValue: 0x30)
  public static let encryptedKW = Self(rawValue: 0x31)
  public static let encryptedEC256 = Self(rawValue: 0x32)
  public static let encryptedX25519 = Self(rawValue: 0x33)
  public static let encryptedX25519SHA512 = Self(rawValue: 0x34)
  public static let dependency = Self(rawValue: 0x40)
  /// The TLVs that carry an image's AES key wrapped for a device key.
  public static let encryptedKeyTypes: [Self] = [
    .encryptedRSA2048, .encryptedKW, .encryptedEC256, .encryptedX25519, .encryptedX25519SHA512,
  ]
  public static let securityCounter = Self(rawValue: 0x50)
  public static let bootRecord = Self(rawValue: 0x60)
  public static let decompressedSize = Self(rawValue: 0x70)
  public static let decompressedSHA = Self(rawValue: 0x71)
  public static let decompressedSignature = Self(rawValue: 0x72)
  public static let compressedDecryptedSize = Self(rawValue: 0x73)
  public static let vendorUUID = Self(rawValue: 0x74)
  public static let classUUID = Self(rawValue: 0x75)

  /// MCUboot's own spelling (`IMAGE_TLV_*` without the prefix), or nil for an unknown type. imgtool
  /// 2.5 prints a few differently (`ECDSASIG`, `RSA2048`, `ENCRSA2048`).
  public var name: String? {
    switch rawValue {
    case 0x01: "KEYHASH"
    case 0x02: "PUBKEY"
    case 0x10: "SHA256"
    case 0x11: "SHA384"
    case 0x12: "SHA512"
    case 0x20: "RSA2048_PSS"
    case 0x21: "ECDSA224"
    case 0x22: "ECDSA_SIG"
    case 0x23: "RSA3072_PSS"
    case 0x24: "ED25519"
    case 0x25: "SIG_PURE"
    case 0x30: "ENC_RSA2048"
    case 0x31: "ENC_KW"
    case 0x32: "ENC_EC256"
    case 0x33: "ENC_X25519"
    case 0x34: "ENC_X25519_SHA512"
    case 0x40: "DEPENDENCY"
    case 0x50: "SEC_CNT"
    case 0x60: "BOOT_RECORD"
    case 0x70: "DECOMP_SIZE"
    case 0x71: "DECOMP_SHA"
    case 0x72: "DECOMP_SIGNATURE"
    case 0x73: "COMP_DEC_SIZE"
    case 0x74: "UUID_VID"
    case 0x75: "UUID_CID"
    default: nil
    }
  }

  /// The types that identify a signing key or carry a signature: what signature checking will
  /// look at. Hashes are not included; they are integrity, not authenticity.
  public var isSignatureRelated: Bool {
    switch self {
    case .keyHash, .publicKey, .rsa2048PSS, .ecdsa224, .ecdsaSignature, .rsa3072PSS, .ed25519,
      .signaturePure:
      true
    default: false
    }
  }

  /// `SHA256 (0x10)`, or `0x00a5` for a type without a name.
  public var description: String {
    let number = mcubootHex(rawValue, digits: rawValue > 0xff ? 4 : 2)
    return name.map { "\($0) (\(number))" } ?? number
  }
}

/// One type-length-value entry of an MCUboot TLV area. On the wire: type u16, length u16,
/// then `length` value bytes.
public struct MCUbootTLV: Sendable, Hashable {
  /// The 4 bytes of type and length before the value.
  public static let headerByteCount = 4

  public var type: MCUbootTLVType
  public var value: [UInt8]

  public init(type: MCUbootTLVType, value: [UInt8]) {
    self.type = type
    self.value = value
  }

  /// Bytes this entry takes in its area: header and value.
  public var encodedLength: Int { Self.headerByteCount + value.count }
}
