import Crypto
import OTAWire

/// The image hashes MCUboot knows, computed over an image's hashed range.
enum ImageHash {
  static func isHash(_ type: MCUbootTLVType) -> Bool {
    [MCUbootTLVType.sha256, .sha384, .sha512].contains(type)
  }

  /// The digest a hash TLV of `type` must hold, or nil when `type` is not a hash TLV.
  static func digest(of hashedBytes: ArraySlice<UInt8>, for type: MCUbootTLVType) -> [UInt8]? {
    switch type {
    case .sha256: Array(SHA256.hash(data: hashedBytes))
    case .sha384: Array(SHA384.hash(data: hashedBytes))
    case .sha512: Array(SHA512.hash(data: hashedBytes))
    default: nil
    }
  }
}
