import OTATestSupport
import Testing

/// The verifier finds what it is there to find: a streaming decoder that loses or invents items at
/// a cut, and a whole-buffer decoder that reads a value from a cut-short input.
@Suite struct DecoderVerifierTests {
  /// Items are runs of bytes up to a zero byte, the zero dropped.
  struct ZeroTerminated {
    var pending: [UInt8] = []
    /// A broken decoder forgets what it held whenever a piece arrives.
    var forgetsAtEachPiece = false

    mutating func feed(_ bytes: ArraySlice<UInt8>) -> [[UInt8]] {
      if forgetsAtEachPiece { pending = [] }
      var items: [[UInt8]] = []
      for byte in bytes {
        if byte == 0 {
          items.append(pending)
          pending = []
        } else {
          pending.append(byte)
        }
      }
      return items
    }
  }

  static let stream: [UInt8] = [1, 2, 0, 3, 0, 0, 4, 5, 6, 0]
  static let items: [[UInt8]] = [[1, 2], [3], [], [4, 5, 6]]

  @Test func aStreamingDecoderThatKeepsItsBytesPasses() {
    let findings = DecoderVerifier.streamingFindings(
      Self.stream, expected: Self.items, makeDecoder: { ZeroTerminated() }
    ) { decoder, bytes throws(Never) in decoder.feed(bytes) }
    #expect(findings.isEmpty, "\(findings)")
  }

  @Test func aStreamingDecoderThatLosesBytesAtACutIsFound() {
    let findings = DecoderVerifier.streamingFindings(
      Self.stream, expected: Self.items, makeDecoder: { ZeroTerminated(forgetsAtEachPiece: true) }
    ) { decoder, bytes throws(Never) in decoder.feed(bytes) }
    // Cuts inside [1, 2] and [4, 5, 6] lose bytes; so does the byte-by-byte feed.
    #expect(findings.contains { $0.hasPrefix("split at 1:") })
    #expect(findings.contains { $0.hasPrefix("split at 8:") })
    #expect(findings.contains { $0.hasPrefix("byte by byte:") })
    #expect(!findings.contains { $0.hasPrefix("split at 3:") }, "a cut between items loses nothing")
  }

  enum Refusal: Error, Equatable { case short, other }

  /// A length byte, then that many bytes.
  static func lengthPrefixed(_ bytes: [UInt8], readsShortValues: Bool) throws(Refusal) -> [UInt8] {
    guard let length = bytes.first else { throw .short }
    guard bytes.count - 1 >= Int(length) else {
      if readsShortValues { return Array(bytes.dropFirst()) }
      throw .short
    }
    return Array(bytes.dropFirst().prefix(Int(length)))
  }

  @Test func aWholeBufferDecoderThatRefusesEveryPrefixPasses() {
    let findings = DecoderVerifier.prefixFindings([3, 7, 8, 9], expected: [7, 8, 9]) {
      bytes throws(Refusal) in
      try Self.lengthPrefixed(bytes, readsShortValues: false)
    } isTruncation: {
      $0 == .short
    }
    #expect(findings.isEmpty, "\(findings)")
  }

  @Test func aWholeBufferDecoderThatReadsAPrefixIsFound() {
    let findings = DecoderVerifier.prefixFindings([3, 7, 8, 9], expected: [7, 8, 9]) {
      bytes throws(Refusal) in try Self.lengthPrefixed(bytes, readsShortValues: true)
    }
    #expect(findings.count == 3, "the prefixes of 1, 2 and 3 bytes: \(findings)")
  }

  @Test func aRefusalOfTheWrongKindIsFound() {
    let findings = DecoderVerifier.prefixFindings([3, 7, 8, 9], expected: [7, 8, 9]) {
      bytes throws(Refusal) in
      try Self.lengthPrefixed(bytes, readsShortValues: false)
    } isTruncation: {
      $0 == .other
    }
    #expect(findings.count == 4, "every proper prefix: \(findings)")
  }
}
