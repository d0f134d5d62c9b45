import OTAWire

/// What a decoded MCUboot layout must satisfy: ordered, adjacent ranges inside the input, and header
/// and TLV areas that re-encode to the input's bytes at their places.
enum MCUbootLayoutChecks {
  static func parsedImage(_ image: [UInt8]) -> [InvariantViolation] {
    var found: [InvariantViolation] = []
    var reader = ByteReader(image)
    let header = try? MCUbootHeader(from: &reader)
    if let header {
      found += headerRules(header, encodedFrom: Array(image.prefix(MCUbootHeader.byteCount)))
    }
    if MCUbootHeader.looksLikeMCUboot(image)
      != (image.count >= 4 && image.prefix(4) == [0x3d, 0xb8, 0xf3, 0x96])
    {
      found.append(.init("magic test", "looksLikeMCUboot disagrees on \(hex(image.prefix(4)))"))
    }
    guard let layout = try? MCUbootImageLayout(parsing: image) else { return found }
    if header == nil { found.append(.init("layout without header", "the header alone was refused")) }
    if layout.payloadRange.lowerBound < UInt64(MCUbootHeader.byteCount) {
      found.append(.init("payload after the header", "payload \(layout.payloadRange)"))
    }
    found += layoutRules(layout, image: image)
    return found
  }

  static func headerAndTLVs(_ bytes: [UInt8]) -> [InvariantViolation] {
    var input = FuzzInput(bytes)
    let header = MCUbootHeader(
      loadAddress: input.u32(), headerSize: input.u16(), protectedTLVSize: input.u16(),
      imageSize: input.bool() ? input.u32() : UInt32(input.u16()), flags: .init(rawValue: input.u32()),
      version: Version(major: input.byte(), minor: input.byte(), revision: input.u16(), build: input.u32()))
    let tlvBytes = input.rest()
    guard let layout = try? MCUbootImageLayout(header: header, tlvAreas: tlvBytes) else { return [] }
    var found = layoutRules(layout, image: nil)
    var encoded: [UInt8] = []
    layout.appendTLVAreas(to: &encoded)
    let areasLength = Int(layout.totalLength - layout.header.tlvOffset)
    if encoded.count != areasLength || Array(tlvBytes.prefix(areasLength)) != encoded {
      found.append(
        .init("TLV areas re-encode", "\(hex(tlvBytes.prefix(areasLength))) became \(hex(encoded))"))
    }
    return found
  }

  /// Areas made from entries (as `otactl image` does) encode to bytes that decode to the same area.
  static func builtArea(_ bytes: [UInt8]) -> [InvariantViolation] {
    var input = FuzzInput(bytes)
    let kind: MCUbootTLVArea.Kind = input.bool() ? .protected : .unprotected
    var entries: [MCUbootTLV] = []
    while !input.isExhausted, entries.count < 64 {
      let type = MCUbootTLVType(rawValue: input.u16())
      let length = input.bool() ? input.int(in: 0...40) : input.int(in: 0...70000)
      entries.append(MCUbootTLV(type: type, value: input.bytes(length)))
    }
    guard let area = try? MCUbootTLVArea(kind: kind, entries: entries) else {
      let total = entries.reduce(MCUbootTLVArea.infoByteCount) { $0 + $1.encodedLength }
      return total <= Int(UInt16.max) ? [.init("TLV area", "\(total) bytes refused although they fit")] : []
    }
    var encoded: [UInt8] = []
    area.append(to: &encoded)
    var reader = ByteReader(encoded)
    guard let decoded = try? MCUbootTLVArea(from: &reader, kind: kind), reader.isAtEnd else {
      return [.init("TLV area re-decode", "\(entries.count) entries encode to bytes the decoder refuses")]
    }
    if decoded != area || Int(area.totalLength) != encoded.count {
      return [.init("TLV area re-decode", "\(area) re-decodes as \(decoded)")]
    }
    return []
  }

  static func headerRules(_ header: MCUbootHeader, encodedFrom input: [UInt8]) -> [InvariantViolation] {
    var found: [InvariantViolation] = []
    var encoded: [UInt8] = []
    header.append(to: &encoded)
    found += WireRoundTrips.canonical("MCUbootHeader", input, encoded)
    if Int(header.headerSize) < MCUbootHeader.byteCount || header.hashedLength > UInt64(UInt32.max) {
      found.append(
        .init("header sizes", "accepted hdr_size \(header.headerSize), hashed \(header.hashedLength)"))
    }
    return found
  }

  /// `image` is the whole image when known (for the header's and TLVs' places in it).
  static func layoutRules(_ layout: MCUbootImageLayout, image: [UInt8]?) -> [InvariantViolation] {
    var found: [InvariantViolation] = []
    let header = layout.header
    let ranges = [
      ("hashed", layout.hashedRange), ("payload", layout.payloadRange),
      ("protected TLVs", layout.protectedTLVRange), ("unprotected TLVs", layout.unprotectedTLVRange),
    ]
    let ordered =
      layout.hashedRange.lowerBound == 0
      && layout.payloadRange.lowerBound == UInt64(header.headerSize)
      && layout.payloadRange.upperBound == layout.protectedTLVRange.lowerBound
      && layout.protectedTLVRange.upperBound == layout.hashedRange.upperBound
      && layout.hashedRange.upperBound == layout.unprotectedTLVRange.lowerBound
      && layout.unprotectedTLVRange.upperBound == layout.totalLength
    if !ordered {
      found.append(.init("layout ranges ordered", ranges.map { "\($0.0) \($0.1)" }.joined(separator: ", ")))
    }
    if (layout.protectedArea != nil) != (header.protectedTLVSize > 0)
      || UInt64(layout.protectedArea?.totalLength ?? 0) != UInt64(header.protectedTLVSize)
    {
      found.append(
        .init(
          "protected area",
          "protect_tlv_size \(header.protectedTLVSize), area \(String(describing: layout.protectedArea))"))
    }
    for area in [layout.protectedArea, layout.unprotectedArea].compactMap({ $0 }) {
      let entriesLength = area.entries.reduce(MCUbootTLVArea.infoByteCount) { $0 + $1.encodedLength }
      if entriesLength != Int(area.totalLength) {
        found.append(
          .init(
            "TLV area filled exactly", "\(area.kind): entries \(entriesLength), total \(area.totalLength)"))
      }
    }
    guard let image else { return found }
    guard layout.totalLength <= UInt64(image.count) else {
      found.append(.init("image within input", "totalLength \(layout.totalLength) of \(image.count) bytes"))
      return found
    }
    var headerBytes: [UInt8] = []
    header.append(to: &headerBytes)
    if Array(image.prefix(MCUbootHeader.byteCount)) != headerBytes {
      found.append(.init("header re-encode", "\(hex(image.prefix(32))) became \(hex(headerBytes))"))
    }
    var areas: [UInt8] = []
    layout.appendTLVAreas(to: &areas)
    let start = Int(header.tlvOffset)
    if Array(image[start..<Int(layout.totalLength)]) != areas {
      found.append(
        .init("TLV areas re-encode", "\(hex(image[start..<Int(layout.totalLength)])) became \(hex(areas))"))
    }
    return found
  }
}
