import OTAWire

/// Why an MCUboot image could not be made, re-signed or inspected. Each text is one readable line
/// that says what was wrong and, where it helps, what to do instead.
public enum ImageError: Error, Sendable, Equatable, CustomStringConvertible {
  /// `hdr_size` below the 32-byte fixed header.
  case headerSizeTooSmall(Int)
  /// `hdr_size` above what its u16 field holds.
  case headerSizeTooLarge(Int)
  /// A payload longer than the u32 `img_size` field holds.
  case payloadTooLarge(Int)
  /// Header, payload and protected TLVs together past 4 GiB: MCUboot computes offsets in u32.
  case imageTooLarge(UInt64)
  /// The input does not start with the MCUboot magic.
  case notMCUboot(String)
  /// The input starts like an MCUboot image but its header or TLV areas are inconsistent.
  case malformed(String)
  /// The payload is encrypted: MCUboot hashes the plaintext, which is not at hand.
  case encrypted
  /// The image's own hash TLV does not match its bytes: it was altered after it was made.
  case hashMismatch(type: MCUbootTLVType, recorded: [UInt8], computed: [UInt8])
  /// Bytes follow the unprotected TLV area (slot padding, a trailer).
  case trailingBytes(Int)
  /// The signing key could not sign.
  case key(KeyError)

  public var description: String {
    switch self {
    case .headerSizeTooSmall(let size):
      "header size \(size) is too small: it must hold the \(MCUbootHeader.byteCount)-byte MCUboot header"
    case .headerSizeTooLarge(let size):
      "header size \(size) is too large: MCUboot's hdr_size field holds at most \(UInt16.max) (0xffff)"
    case .payloadTooLarge(let count):
      "the payload is \(count) bytes; MCUboot's img_size field holds at most \(UInt32.max)"
    case .imageTooLarge(let length):
      "header, payload and protected TLVs would be \(length) bytes; MCUboot's offsets are 32-bit "
        + "(at most \(UInt32.max))"
    case .notMCUboot(let reason):
      "not an MCUboot image: \(reason)"
    case .malformed(let reason):
      "malformed MCUboot image: \(reason)"
    case .encrypted:
      "the image's payload is encrypted (IMAGE_F_ENCRYPTED_*); MCUboot hashes and signs the plaintext, "
        + "so sign the image before encrypting it"
    case .hashMismatch(let type, let recorded, let computed):
      "the image's \(type) TLV (\(Hex.string(recorded.prefix(8)))…) does not match its contents "
        + "(\(Hex.string(computed.prefix(8)))…): it was changed after it was made; refusing to sign it"
    case .trailingBytes(let count):
      "\(count) bytes follow the image's TLV areas (slot padding or a trailer, imgtool --pad?); "
        + "give the image without them"
    case .key(let error):
      "\(error)"
    }
  }
}
