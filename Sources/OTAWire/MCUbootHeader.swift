/// The 32-byte header at the start of every MCUboot image (`struct image_header` in MCUboot's
/// `bootutil/include/bootutil/image.h`), little-endian:
///
///     0  magic             u32  0x96f3b83d
///     4  load_addr         u32
///     8  hdr_size          u16  offset of the payload; >= 32, imgtool pads it (often 0x200)
///    10  protect_tlv_size  u16  bytes of the protected TLV area, info header included; 0 = none
///    12  img_size          u32  payload bytes, header not included
///    16  flags             u32  IMAGE_F_*
///    20  version           8 B  major u8, minor u8, revision u16, build u32
///    28  pad               u32
///
/// The image is `header | payload | protected TLVs | TLVs`; the TLV areas begin at
/// `hdr_size + img_size`.
public struct MCUbootHeader: Sendable, Hashable {
  /// `IMAGE_MAGIC`: the first four bytes of every MCUboot image.
  public static let magic: UInt32 = 0x96f3_b83d
  /// `IMAGE_HEADER_SIZE`: the fixed part decoded here. `hdr_size` may be larger (zero padding).
  public static let byteCount = 32

  public var loadAddress: UInt32
  /// Where the payload starts, counted from the start of the image.
  public var headerSize: UInt16
  /// Length of the protected TLV area including its 4-byte info header, or 0 when there is none.
  public var protectedTLVSize: UInt16
  /// Length of the payload alone.
  public var imageSize: UInt32
  public var flags: Flags
  public var version: Version
  /// The trailing `_pad1` word, kept so that re-encoding a decoded header gives back its bytes.
  public var reserved: UInt32

  public init(
    loadAddress: UInt32 = 0, headerSize: UInt16, protectedTLVSize: UInt16 = 0, imageSize: UInt32,
    flags: Flags = [], version: Version, reserved: UInt32 = 0
  ) {
    self.loadAddress = loadAddress
    self.headerSize = headerSize
    self.protectedTLVSize = protectedTLVSize
    self.imageSize = imageSize
    self.flags = flags
    self.version = version
    self.reserved = reserved
  }

  /// Decodes and checks the fixed 32 bytes: the magic, a `hdr_size` that can hold them, and sizes
  /// whose sum fits in 32 bits (MCUboot computes offsets in `uint32_t`; a sum that wraps there would
  /// point its bootloader somewhere else than it points us).
  public init(from reader: inout ByteReader) throws(WireError) {
    guard reader.remaining >= Self.byteCount else {
      throw .malformed(
        "MCUboot header needs \(Self.byteCount) bytes, only \(reader.remaining) available")
    }
    let magic = try reader.readU32()
    guard magic == Self.magic else {
      throw .malformed(
        "not an MCUboot image: magic is \(mcubootHex(magic, digits: 8)), expected \(mcubootHex(Self.magic, digits: 8))"
      )
    }
    loadAddress = try reader.readU32()
    headerSize = try reader.readU16()
    protectedTLVSize = try reader.readU16()
    imageSize = try reader.readU32()
    flags = Flags(rawValue: try reader.readU32())
    version = try Version(from: &reader)
    reserved = try reader.readU32()

    guard Int(headerSize) >= Self.byteCount else {
      throw .malformed(
        "MCUboot hdr_size is \(headerSize), smaller than the \(Self.byteCount)-byte header itself")
    }
    guard protectedTLVSize == 0 || Int(protectedTLVSize) >= MCUbootTLVArea.infoByteCount else {
      throw .malformed(
        "MCUboot protect_tlv_size is \(protectedTLVSize): neither 0 (no protected TLVs) nor large "
          + "enough for the \(MCUbootTLVArea.infoByteCount)-byte protected TLV info header")
    }
    guard hashedLength <= UInt64(UInt32.max) else {
      throw .malformed(
        "MCUboot sizes overflow 32 bits: hdr_size \(headerSize) + img_size \(imageSize) + "
          + "protect_tlv_size \(protectedTLVSize) = \(hashedLength)")
    }
  }

  public func append(to bytes: inout [UInt8]) {
    bytes.appendU32(Self.magic)
    bytes.appendU32(loadAddress)
    bytes.appendU16(headerSize)
    bytes.appendU16(protectedTLVSize)
    bytes.appendU32(imageSize)
    bytes.appendU32(flags.rawValue)
    version.append(to: &bytes)
    bytes.appendU32(reserved)
  }

  /// Where the TLV areas begin (the protected one first, when present): right after the payload.
  public var tlvOffset: UInt64 { UInt64(headerSize) + UInt64(imageSize) }

  /// Length of what MCUboot hashes and signs: header, payload and the protected TLV area.
  public var hashedLength: UInt64 { tlvOffset + UInt64(protectedTLVSize) }

  /// True when `prefix` starts with the MCUboot magic: the cheap test that decides whether a slot
  /// holds an MCUboot image or a raw one. Says nothing about whether the rest is well formed.
  public static func looksLikeMCUboot(_ prefix: some Collection<UInt8>) -> Bool {
    var reader = ByteReader(prefix.prefix(4))
    guard let magic = try? reader.readU32() else { return false }
    return magic == Self.magic
  }
}

extension MCUbootHeader {
  /// `IMAGE_F_*` bits. Unknown bits are kept in `rawValue` and survive a decode/encode round trip.
  /// The payload is encrypted (IMAGE_F_ENCRYPTED_AES128 or _AES256).
  public var isEncrypted: Bool { !flags.isDisjoint(with: [.encryptedAES128, .encryptedAES256]) }

  public struct Flags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let positionIndependent = Flags(rawValue: 0x0000_0001)
    public static let encryptedAES128 = Flags(rawValue: 0x0000_0004)
    public static let encryptedAES256 = Flags(rawValue: 0x0000_0008)
    public static let nonBootable = Flags(rawValue: 0x0000_0010)
    public static let ramLoad = Flags(rawValue: 0x0000_0020)
    public static let romFixed = Flags(rawValue: 0x0000_0100)
    public static let compressedLZMA1 = Flags(rawValue: 0x0000_0200)
    public static let compressedLZMA2 = Flags(rawValue: 0x0000_0400)
    public static let compressedARMThumb = Flags(rawValue: 0x0000_0800)
  }
}

/// `0x` and `digits` lowercase hex digits: how MCUboot's tools print magics and types.
func mcubootHex(_ value: some BinaryInteger, digits: Int) -> String {
  let text = String(value, radix: 16)
  return "0x" + String(repeating: "0", count: max(0, digits - text.count)) + text
}
