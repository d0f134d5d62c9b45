import OTAWire

extension MCUbootHeader.Flags {
  private static let named: [(Self, String)] = [
    (.positionIndependent, "PIC"), (.encryptedAES128, "ENCRYPTED_AES128"),
    (.encryptedAES256, "ENCRYPTED_AES256"), (.nonBootable, "NON_BOOTABLE"), (.ramLoad, "RAM_LOAD"),
    (.romFixed, "ROM_FIXED"), (.compressedLZMA1, "COMPRESSED_LZMA1"), (.compressedLZMA2, "COMPRESSED_LZMA2"),
    (.compressedARMThumb, "COMPRESSED_ARM_THUMB"),
  ]

  /// The set bits by imgtool's `IMAGE_F` names; a bit without a name as `0x…`.
  public var names: [String] {
    var names: [String] = []
    var unnamed = rawValue
    for (flag, name) in Self.named where contains(flag) {
      names.append(name)
      unnamed &= ~flag.rawValue
    }
    for bit in 0..<32 where unnamed & (1 << UInt32(bit)) != 0 {
      names.append("0x" + String(UInt32(1) << UInt32(bit), radix: 16))
    }
    return names
  }
}
