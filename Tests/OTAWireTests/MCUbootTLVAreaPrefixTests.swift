import OTATestSupport
import OTAWire
import Testing

/// The MCUboot TLV area decoder takes its bytes whole: every proper prefix of an area is cut short
/// and must be refused as malformed, never read as a smaller area; the whole gives the area.
@Suite struct MCUbootTLVAreaPrefixTests {
  static func decode(_ bytes: [UInt8], kind: MCUbootTLVArea.Kind) throws(WireError) -> MCUbootTLVArea {
    var reader = ByteReader(bytes)
    return try MCUbootTLVArea(from: &reader, kind: kind)
  }

  @Test(arguments: [MCUbootTLVArea.Kind.protected, .unprotected])
  func mcubootTLVAreaRefusesEveryPrefixAndReadsTheWholeArea(kind: MCUbootTLVArea.Kind) throws {
    let area = try MCUbootTLVArea(
      kind: kind,
      entries: [
        MCUbootTLV(type: .sha256, value: SeededGenerator.bytes(32, seed: 1)),
        MCUbootTLV(type: .keyHash, value: SeededGenerator.bytes(32, seed: 2)),
        MCUbootTLV(type: MCUbootTLVType(rawValue: 0x50), value: []),
        MCUbootTLV(type: .ed25519, value: SeededGenerator.bytes(64, seed: 3)),
      ])
    var bytes: [UInt8] = []
    area.append(to: &bytes)
    let findings = DecoderVerifier.prefixFindings(bytes, expected: area) { prefix throws(WireError) in
      try Self.decode(prefix, kind: kind)
    } isTruncation: { error in
      if case .malformed = error { true } else { false }
    }
    #expect(findings.isEmpty, "\(findings)")
  }
}
