import OTACBOR
import OTATestSupport
import Testing

/// RFC 8949 appendix A: the examples this codec takes, both ways (each is in canonical form).
@Suite struct RFC8949VectorTests {
  static let vectors: [(String, CBOR)] = [
    ("00", .unsigned(0)), ("01", .unsigned(1)), ("0a", .unsigned(10)), ("17", .unsigned(23)),
    ("1818", .unsigned(24)), ("1819", .unsigned(25)), ("1864", .unsigned(100)), ("1903e8", .unsigned(1000)),
    ("1a000f4240", .unsigned(1_000_000)), ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)),
    ("1bffffffffffffffff", .unsigned(UInt64.max)), ("3bffffffffffffffff", .negative(UInt64.max)),
    ("20", .int(-1)), ("29", .int(-10)), ("3863", .int(-100)), ("3903e7", .int(-1000)),
    ("f4", .bool(false)), ("f5", .bool(true)), ("f6", .null),
    ("40", .bytes([])), ("4401020304", .bytes([1, 2, 3, 4])),
    ("60", .text("")), ("6161", .text("a")), ("6449455446", .text("IETF")), ("62225c", .text("\"\\")),
    ("62c3bc", .text("\u{00fc}")), ("63e6b0b4", .text("\u{6c34}")), ("64f0908591", .text("\u{10151}")),
    ("80", .array([])), ("83010203", .array([.unsigned(1), .unsigned(2), .unsigned(3)])),
    (
      "8301820203820405",
      .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])
    ),
    ("a0", .map([])),
    ("a201020304", .map([CBOR.Entry(.unsigned(1), .unsigned(2)), CBOR.Entry(.unsigned(3), .unsigned(4))])),
    ("a26161016162820203", .textMap(["a": .unsigned(1), "b": .array([.unsigned(2), .unsigned(3)])])),
    ("826161a161626163", .array([.text("a"), .textMap(["b": .text("c")])])),
  ]

  @Test(arguments: vectors)
  func decodesAndEncodes(hex: String, value: CBOR) throws {
    let bytes = HexNotation.bytes(hex)
    #expect(try CBORDecoder.decode(bytes) == value)
    #expect(value.encoded == bytes)
  }

  @Test func twentyFiveElementArrayTakesAOneByteCount() throws {
    let value = CBOR.array((1...25).map { .unsigned(UInt64($0)) })
    let hex = "98190102030405060708090a0b0c0d0e0f101112131415161718181819"
    #expect(value.encoded == HexNotation.bytes(hex))
    #expect(try CBORDecoder.decode(HexNotation.bytes(hex)) == value)
  }

  /// The appendix's indefinite-length examples decode to their definite equivalents.
  @Test(arguments: [
    ("5f42010243030405ff", CBOR.bytes([1, 2, 3, 4, 5])),
    ("7f657374726561646d696e67ff", CBOR.text("streaming")),
    ("9fff", CBOR.array([])),
    (
      "9f018202039f0405ffff",
      CBOR.array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])
    ),
    (
      "bf61610161629f0203ffff", CBOR.textMap(["a": .unsigned(1), "b": .array([.unsigned(2), .unsigned(3)])])
    ),
    ("bf6346756ef563416d7421ff", CBOR.textMap(["Fun": .bool(true), "Amt": .int(-2)])),
  ])
  func indefiniteLengthsDecode(hex: String, value: CBOR) throws {
    #expect(try CBORDecoder.decode(HexNotation.bytes(hex)) == value)
  }

  @Test func integersInLongerHeadsThanNeededAreAccepted() throws {
    #expect(try CBORDecoder.decode(HexNotation.bytes("1b0000000000000001")) == .unsigned(1))
    #expect(try CBORDecoder.decode(HexNotation.bytes("1800")) == .unsigned(0))
  }
}
