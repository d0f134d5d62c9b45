/// Where everything is in an MCUboot image, decoded strictly from its header and TLV areas:
///
///     [0, hdr_size)                          header (32 bytes, then zero padding)
///     [hdr_size, hdr_size + img_size)        payload
///     [.., + protect_tlv_size)               protected TLV area, when protect_tlv_size > 0
///     [.., + unprotected total)              unprotected TLV area: hash, key hash, signature
///
/// MCUboot hashes (and signs the hash of) `[0, hdr_size + img_size + protect_tlv_size)`.
/// The payload itself is not held here: a layout is built from the header and the TLV bytes only,
/// so a verifier can stream the payload from storage instead of loading it.
public struct MCUbootImageLayout: Sendable, Hashable {
  /// The most bytes both TLV areas together can take: each length field is a u16.
  public static let maximumTLVAreasLength = 2 * Int(UInt16.max)

  public let header: MCUbootHeader
  /// Present exactly when `header.protectedTLVSize > 0`.
  public let protectedArea: MCUbootTLVArea?
  public let unprotectedArea: MCUbootTLVArea

  /// Assembles a layout from parts, checking that they agree: the area kinds, and the header's
  /// `protect_tlv_size` against the protected area's length. For making images.
  public init(
    header: MCUbootHeader, protectedArea: MCUbootTLVArea?, unprotectedArea: MCUbootTLVArea
  ) throws(WireError) {
    guard (protectedArea?.kind ?? .protected) == .protected, unprotectedArea.kind == .unprotected else {
      throw .invalidField("MCUboot TLV areas passed in the wrong order (protected, then unprotected)")
    }
    let protectedLength = protectedArea?.totalLength ?? 0
    guard header.protectedTLVSize == protectedLength else {
      throw .malformed(
        "MCUboot header's protect_tlv_size is \(header.protectedTLVSize) but the protected TLV area "
          + "is \(protectedLength) bytes")
    }
    self.header = header
    self.protectedArea = protectedArea
    self.unprotectedArea = unprotectedArea
  }

  /// Decodes the TLV areas from `tlvAreas`, the image's bytes starting at `header.tlvOffset`.
  /// Bytes after the unprotected area (slot padding, a trailer) are ignored; `totalLength` says
  /// where the image ends so that a caller can insist nothing follows.
  public init(header: MCUbootHeader, tlvAreas: some Collection<UInt8>) throws(WireError) {
    var reader = ByteReader(tlvAreas)
    var protectedArea: MCUbootTLVArea?
    if header.protectedTLVSize > 0 {
      let area = try MCUbootTLVArea(from: &reader, kind: .protected, offset: header.tlvOffset)
      guard area.totalLength == header.protectedTLVSize else {
        throw .malformed(
          "MCUboot header's protect_tlv_size is \(header.protectedTLVSize) but the protected TLV area "
            + "at offset \(header.tlvOffset) declares \(area.totalLength) bytes")
      }
      protectedArea = area
    } else {
      var peek = reader
      if let magic = try? peek.readU16(), magic == MCUbootTLVArea.Kind.protected.infoMagic {
        throw .malformed(
          "a protected TLV area (magic 0x6908) follows the payload at offset \(header.tlvOffset), "
            + "but the MCUboot header's protect_tlv_size is 0")
      }
    }
    let unprotectedArea = try MCUbootTLVArea(
      from: &reader, kind: .unprotected, offset: header.hashedLength)
    try self.init(header: header, protectedArea: protectedArea, unprotectedArea: unprotectedArea)
  }

  /// Decodes a whole image held in memory (or at least its first `totalLength` bytes).
  public init(parsing image: some Collection<UInt8>) throws(WireError) {
    var reader = ByteReader(image)
    let header = try MCUbootHeader(from: &reader)
    let available = UInt64(reader.bytes.count)
    guard header.tlvOffset <= available else {
      throw .malformed(
        "MCUboot image is \(available) bytes but its header puts the TLV areas at offset "
          + "\(header.tlvOffset) (hdr_size \(header.headerSize) + img_size \(header.imageSize))")
    }
    let tlvStart = reader.bytes.startIndex + Int(header.tlvOffset)
    try self.init(header: header, tlvAreas: reader.bytes[tlvStart...])
  }

  /// Header, payload and protected TLVs: the bytes the SHA256 TLV is the digest of.
  public var hashedRange: Range<UInt64> { 0..<header.hashedLength }
  public var payloadRange: Range<UInt64> { UInt64(header.headerSize)..<header.tlvOffset }
  /// Empty (at `header.tlvOffset`) when the image has no protected TLVs.
  public var protectedTLVRange: Range<UInt64> { header.tlvOffset..<header.hashedLength }
  public var unprotectedTLVRange: Range<UInt64> {
    header.hashedLength..<header.hashedLength + UInt64(unprotectedArea.totalLength)
  }
  /// The image's length: everything up to the end of the unprotected TLV area.
  public var totalLength: UInt64 { unprotectedTLVRange.upperBound }

  public var protectedTLVs: [MCUbootTLV] { protectedArea?.entries ?? [] }
  public var unprotectedTLVs: [MCUbootTLV] { unprotectedArea.entries }

  /// Key-identifying and signature TLVs of both areas, in image order. Nothing here is verified:
  /// this is what signature checking will be given.
  public var signatureTLVs: [MCUbootTLV] {
    (protectedTLVs + unprotectedTLVs).filter(\.type.isSignatureRelated)
  }

  /// The SEC_CNT value, as MCUboot reads it: a u32 in the protected (signed) area, at most once; nil
  /// when there is none. One in the unprotected area could be changed by anyone: the image is malformed.
  public func securityCounter() throws(WireError) -> UInt32? {
    guard unprotectedArea.values(of: .securityCounter).isEmpty else {
      throw .malformed("a SEC_CNT TLV sits in the unprotected TLV area, outside the signed range")
    }
    let values = protectedArea?.values(of: .securityCounter) ?? []
    guard let value = values.first else { return nil }
    guard values.count == 1 else {
      throw .malformed("the image has \(values.count) SEC_CNT TLVs; it may have one")
    }
    guard value.count == 4 else { throw .malformed("the SEC_CNT TLV is \(value.count) bytes, expected 4") }
    var reader = ByteReader(value)
    return try reader.readU32()
  }

  /// Encodes both TLV areas: what follows the payload in the image.
  public func appendTLVAreas(to bytes: inout [UInt8]) {
    protectedArea?.append(to: &bytes)
    unprotectedArea.append(to: &bytes)
  }
}
