import OTACBOR
import OTATestSupport
import Testing

/// Every way an input can be wrong ends in its own typed error, never a trap or a guess.
@Suite struct MalformedInputTests {
  @Test(arguments: [
    ("", CBORError.truncated),
    ("18", .truncated),
    ("1a0000", .truncated),
    ("62c3", .truncated),
    ("83 0102", .truncated),
    ("a1 01", .truncated),
    ("9f01", .truncated),
    ("5f4101", .truncated),
    ("0101", .trailingBytes(count: 1)),
    ("1c", .reservedAdditionalInfo(28)),
    ("3d", .reservedAdditionalInfo(29)),
    ("fe", .reservedAdditionalInfo(30)),
    ("c074323031332d30332d32315432303a30343a30305a", .unsupported("tag")),
    ("f93c00", .unsupported("float")),
    ("fb3ff199999999999a", .unsupported("float")),
    ("f7", .unsupported("simple value")),
    ("f820", .unsupported("simple value")),
    ("1f", .invalidIndefiniteLength),
    ("3f", .invalidIndefiniteLength),
    ("5f6161ff", .invalidIndefiniteLength),
    ("5f5f4101ffff", .invalidIndefiniteLength),
    ("ff", .unexpectedBreak),
    ("8201ff", .unexpectedBreak),
    ("62c328", .invalidUTF8),
    ("63eda080", .invalidUTF8),
    ("a2616101616102", .duplicateKey),
  ])
  func isRefused(hex: String, error: CBORError) {
    let bytes = HexNotation.bytes(hex.replacingSpaces())
    #expect(throws: error) { try CBORDecoder.decode(bytes) }
  }

  @Test func aCountLargerThanTheInputIsRefusedBeforeAnythingIsAllocated() {
    // [SEC-SMP-8]
    #expect(throws: CBORError.truncated) { try CBORDecoder.decode(HexNotation.bytes("9bffffffffffffffff")) }
    #expect(throws: CBORError.truncated) { try CBORDecoder.decode(HexNotation.bytes("5bffffffffffffffff00")) }
    #expect(throws: CBORError.truncated) { try CBORDecoder.decode(HexNotation.bytes("bb7fffffffffffffff")) }
  }

  @Test func depthIsBounded() throws {
    // [SEC-SMP-8]
    let limits = CBORLimits(maxDepth: 3)
    #expect(
      try CBORDecoder.decode(HexNotation.bytes("818180"), limits: limits) == .array([.array([.array([])])]))
    #expect(throws: CBORError.tooDeep(limit: 3)) {
      try CBORDecoder.decode(HexNotation.bytes("81818180"), limits: limits)
    }
    let deep = [UInt8](repeating: 0x81, count: 10_000) + [0x00]
    #expect(throws: CBORError.tooDeep(limit: 8)) { try CBORDecoder.decode(deep) }
  }

  @Test func itemsAreCountedAcrossTheWholeInput() throws {
    // [SEC-SMP-8]
    let limits = CBORLimits(maxItems: 4)
    #expect(
      try CBORDecoder.decode(HexNotation.bytes("83010203"), limits: limits)
        == .array([.unsigned(1), .unsigned(2), .unsigned(3)]))
    #expect(throws: CBORError.tooManyItems(limit: 4)) {
      try CBORDecoder.decode(HexNotation.bytes("8401020304"), limits: limits)
    }
    // The chunks of an indefinite string count too: an input cannot make up work past its items.
    #expect(throws: CBORError.tooManyItems(limit: 4)) {
      try CBORDecoder.decode(HexNotation.bytes("5f4101410241034104ff"), limits: limits)
    }
  }

  @Test func inputSizeIsBounded() {
    let limits = CBORLimits(maxBytes: 4)
    #expect(throws: CBORError.tooLarge(limit: 4)) {
      try CBORDecoder.decode(HexNotation.bytes("4401020304"), limits: limits)
    }
  }
}

extension String {
  fileprivate func replacingSpaces() -> String { filter { $0 != " " } }
}
