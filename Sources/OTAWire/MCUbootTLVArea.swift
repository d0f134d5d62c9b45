/// One of an MCUboot image's two TLV areas: a 4-byte info header (magic u16, total length u16
/// counting the info header itself) followed by TLV entries that fill it exactly.
///
/// The protected area (magic 0x6908) sits inside the hashed and signed range, right after the
/// payload; the unprotected one (magic 0x6907) follows it and holds the hash and the signature.
/// A value of this type is always encodable: its total length fits the u16 length field.
public struct MCUbootTLVArea: Sendable, Hashable {
  /// The info header's size: magic u16 and total length u16.
  public static let infoByteCount = 4

  public enum Kind: Sendable, Hashable, CustomStringConvertible {
    case protected, unprotected

    /// `IMAGE_TLV_PROT_INFO_MAGIC` or `IMAGE_TLV_INFO_MAGIC`.
    public var infoMagic: UInt16 {
      switch self {
      case .protected: 0x6908
      case .unprotected: 0x6907
      }
    }

    public var description: String { self == .protected ? "protected" : "unprotected" }
  }

  public let kind: Kind
  public let entries: [MCUbootTLV]
  /// The info header's total: 4 plus every entry's header and value.
  public let totalLength: UInt16

  /// Checks that the entries fit in one area: the total is a u16 on the wire.
  public init(kind: Kind, entries: [MCUbootTLV]) throws(WireError) {
    let total = entries.reduce(Self.infoByteCount) { $0 + $1.encodedLength }
    guard let totalLength = UInt16(exactly: total) else {
      throw .invalidField(
        "\(kind) TLV area would be \(total) bytes; its length field holds at most \(UInt16.max)")
    }
    self.kind = kind
    self.entries = entries
    self.totalLength = totalLength
  }

  /// Decodes the area that starts at the reader's position and leaves the reader right after it.
  /// Refuses a wrong magic, a total shorter than the info header or longer than the bytes at hand,
  /// and any entry whose header or value would run past the area's end.
  /// - Parameter offset: where the area starts in the image; used only in error messages.
  public init(from reader: inout ByteReader, kind: Kind, offset: UInt64 = 0) throws(WireError) {
    guard reader.remaining >= Self.infoByteCount else {
      throw .malformed(
        "\(kind) TLV area at offset \(offset) is cut short: its \(Self.infoByteCount)-byte info "
          + "header has only \(reader.remaining) bytes")
    }
    let magic = try reader.readU16()
    guard magic == kind.infoMagic else {
      throw .malformed(
        "\(kind) TLV area at offset \(offset) has info magic \(mcubootHex(magic, digits: 4)), "
          + "expected \(mcubootHex(kind.infoMagic, digits: 4))")
    }
    let totalLength = try reader.readU16()
    guard Int(totalLength) >= Self.infoByteCount else {
      throw .malformed(
        "\(kind) TLV area at offset \(offset) declares \(totalLength) bytes, fewer than its own "
          + "\(Self.infoByteCount)-byte info header")
    }
    let bodyLength = Int(totalLength) - Self.infoByteCount
    guard reader.remaining >= bodyLength else {
      throw .malformed(
        "\(kind) TLV area at offset \(offset) declares \(totalLength) bytes but only "
          + "\(Self.infoByteCount + reader.remaining) are present")
    }
    var body = ByteReader(try reader.readBytes(bodyLength))
    var entries: [MCUbootTLV] = []
    while !body.isAtEnd {
      let entryOffset = offset + UInt64(Self.infoByteCount) + UInt64(body.position - body.bytes.startIndex)
      guard body.remaining >= MCUbootTLV.headerByteCount else {
        throw .malformed(
          "\(kind) TLV area at offset \(offset): \(body.remaining) stray bytes at offset "
            + "\(entryOffset), too few for a \(MCUbootTLV.headerByteCount)-byte TLV header")
      }
      let type = MCUbootTLVType(rawValue: try body.readU16())
      let length = Int(try body.readU16())
      guard body.remaining >= length else {
        throw .malformed(
          "TLV \(type) at offset \(entryOffset) declares \(length) value bytes but its \(kind) "
            + "area has only \(body.remaining) left")
      }
      entries.append(MCUbootTLV(type: type, value: Array(try body.readBytes(length))))
    }
    self.kind = kind
    self.entries = entries
    self.totalLength = totalLength
  }

  public func append(to bytes: inout [UInt8]) {
    bytes.appendU16(kind.infoMagic)
    bytes.appendU16(totalLength)
    for entry in entries {
      bytes.appendU16(entry.type.rawValue)
      // Fits: the initializers bound the whole area to UInt16.max.
      bytes.appendU16(UInt16(truncatingIfNeeded: entry.value.count))
      bytes.append(contentsOf: entry.value)
    }
  }

  /// The values of every entry of `type`, in area order.
  public func values(of type: MCUbootTLVType) -> [[UInt8]] {
    entries.filter { $0.type == type }.map(\.value)
  }
}
