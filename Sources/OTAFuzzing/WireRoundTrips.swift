import OTAWire

/// Decode, re-encode, compare: the round-trip rules of the protocol's byte formats.
enum WireRoundTrips {
  static func request(_ bytes: [UInt8]) -> [InvariantViolation] {
    guard let request = try? Request(bytes: bytes) else { return [] }
    var found = canonical("Request", bytes, request.encoded)
    if request.encoded.count > 20 { found.append(.init("fits in 20 bytes", "Request \(request)")) }
    return found
  }

  /// Control-point notifications: responses, and missing-range reports (their own first byte).
  static func response(_ bytes: [UInt8]) -> [InvariantViolation] {
    if bytes.first == MissingReport.marker { return missingReport(bytes) }
    guard let response = try? Response(bytes: bytes) else { return [] }
    return canonical("Response", bytes, response.encoded)
      + redecodes("Response", response, { try Response(bytes: $0) }, response.encoded)
  }

  static func missingReport(_ bytes: [UInt8]) -> [InvariantViolation] {
    guard let report = try? MissingReport(bytes: bytes) else { return [] }
    return canonical("MissingReport", bytes, report.encoded)
      + redecodes("MissingReport", report, { try MissingReport(bytes: $0) }, report.encoded)
  }

  static func dataChunk(_ bytes: [UInt8]) -> [InvariantViolation] {
    guard let chunk = try? DataChunk(bytes: bytes) else { return [] }
    var found = canonical("DataChunk", bytes, chunk.encoded)
    if chunk.payload.isEmpty { found.append(.init("chunk carries bytes", "empty payload accepted")) }
    if chunk.end != UInt64(chunk.offset) + UInt64(bytes.count - DataChunk.headerSize) {
      found.append(.init("chunk end", "end \(chunk.end) for \(bytes.count) bytes at \(chunk.offset)"))
    }
    return found
  }

  /// Info is append-only: a decoder reads the first 69 bytes and every whole field after them and
  /// ignores the rest, so the re-encoding must equal the input's first 114 bytes (a 69-byte record
  /// gains a zero byte 69, one without the whole dropped-chunk count gains a zero count, one without
  /// whole features none, one without the whole PSM a zero PSM).
  static func infoRecord(_ bytes: [UInt8]) -> [InvariantViolation] {
    guard let info = try? InfoRecord(bytes: bytes) else { return [] }
    var expected = Array(bytes.prefix(InfoRecord.byteCount))
    if expected.count == InfoRecord.minimumByteCount { expected.append(0) }
    if expected.count < 74 {
      expected = Array(expected.prefix(70)) + [0, 0, 0, 0]
    }
    // Each field after that is whole or read as 0: features (78), the PSM (80), the max operation
    // length (84), the running image's size (88) and CRC32 (92).
    for end in [78, 80, 84, 88, 92] where expected.count < end {
      let start = end == 80 ? 78 : end - 4
      expected = Array(expected.prefix(start)) + [UInt8](repeating: 0, count: end - start)
    }
    // The receive span (96) when missing reads as the window capacity (bytes 25..<29).
    if expected.count < 96 {
      expected = Array(expected.prefix(92)) + expected[25..<29]
    }
    // The max frame length (100) when missing reads as 0.
    if expected.count < 100 {
      expected = Array(expected.prefix(96)) + [0, 0, 0, 0]
    }
    // The kept activation (114) when missing reads as none: 14 zero bytes.
    if expected.count < InfoRecord.byteCount {
      expected = Array(expected.prefix(100)) + [UInt8](repeating: 0, count: KeptActivation.byteCount)
    }
    return canonical("InfoRecord", expected, info.encoded)
      + redecodes("InfoRecord", info, { try InfoRecord(bytes: $0) }, info.encoded)
  }

  static func version(_ bytes: [UInt8]) -> [InvariantViolation] {
    var reader = ByteReader(bytes)
    guard let version = try? Version(from: &reader) else { return [] }
    var encoded: [UInt8] = []
    version.append(to: &encoded)
    var found = canonical("Version", Array(bytes.prefix(Version.byteCount)), encoded)
    if Version(text: version.description) != version {
      found.append(.init("version text round trip", "\(version) does not parse back"))
    }
    return found
  }

  /// Any text: parsing never traps, and what parses prints as text that parses to the same version.
  static func versionText(_ bytes: [UInt8]) -> [InvariantViolation] {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let version = Version(text: text) else { return [] }
    guard Version(text: version.description) == version else {
      return [.init("version text round trip", "\(text.debugDescription) -> \(version) does not parse back")]
    }
    return []
  }

  static func canonical(_ what: String, _ input: [UInt8], _ encoded: [UInt8]) -> [InvariantViolation] {
    guard input != encoded else { return [] }
    return [.init("canonical encoding", "\(what) from \(hex(input)) re-encodes as \(hex(encoded))")]
  }

  static func redecodes<Value: Equatable>(
    _ what: String, _ value: Value, _ decode: ([UInt8]) throws -> Value, _ encoded: [UInt8]
  ) -> [InvariantViolation] {
    guard let again = try? decode(encoded) else {
      return [.init("re-decode", "\(what) \(value) encodes to bytes it refuses: \(hex(encoded))")]
    }
    guard again == value else {
      return [.init("re-decode", "\(what) \(value) re-decodes as \(again)")]
    }
    return []
  }
}

/// Lowercase hex, for violation messages.
func hex(_ bytes: some Collection<UInt8>) -> String {
  let digits = Array("0123456789abcdef")
  return String(bytes.prefix(96).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] })
    + (bytes.count > 96 ? "…(\(bytes.count) bytes)" : "")
}
