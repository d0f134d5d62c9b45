import OTACBOR
import OTATestSupport
import Testing

/// The CBOR decoder takes one item whole: every proper prefix of an item ends inside it and must
/// be refused as truncated, never read as another item; the whole gives the item.
@Suite struct CBORDecoderPrefixTests {
  /// Every kind the codec takes, nested: integers of each head size, negatives, strings, arrays, maps.
  static let item = CBOR.textMap([
    "image": .unsigned(0),
    "off": .unsigned(70_000),
    "len": .unsigned(5_000_000_000),
    "neg": .int(-300),
    "data": .bytes(Array(0..<40)),
    "sha": .text("b79e354ea339879bef35c59dbb6ef0f1"),
    "list": .array([.bool(true), .bool(false), .null, .array([]), .textMap(["x": .int(-1)])]),
  ])

  @Test func cborDecoderRefusesEveryPrefixAsTruncatedAndReadsTheWholeItem() {
    let findings = DecoderVerifier.prefixFindings(Self.item.encoded, expected: Self.item) {
      bytes throws(CBORError) in
      try CBORDecoder.decode(bytes)
    } isTruncation: { error in
      error == .truncated
    }
    #expect(findings.isEmpty, "\(findings)")
  }
}
