/// Holds a decoder to the one promise every decoder makes about where its input is cut.
///
/// A streaming decoder (bytes appended as they arrive, whole items handed out) must give the same
/// items however the input is cut: at every two-part split, and fed one byte at a time. A
/// whole-buffer decoder (given all the bytes at once) must refuse every proper prefix of a valid
/// input (a value from a cut-short input would be a lie) and give the value for the whole.
///
/// Each check returns its findings, one line each, empty when the decoder keeps the promise: a test
/// expects them empty, and a test of the verifier itself can feed it a decoder that breaks it.
public enum DecoderVerifier {
  /// The findings of feeding `input` to fresh decoders cut in two at every position (the first part
  /// empty through the whole), then one byte at a time.
  /// - Parameters:
  ///   - expected: the items the whole input holds, in order.
  ///   - makeDecoder: a fresh decoder.
  ///   - feed: appends bytes to the decoder and returns every item now complete.
  public static func streamingFindings<Decoder, Item: Equatable, Failure: Error>(
    _ input: [UInt8], expected: [Item], makeDecoder: () -> Decoder,
    feed: (inout Decoder, ArraySlice<UInt8>) throws(Failure) -> [Item]
  ) -> [String] {
    var findings: [String] = []
    for split in 0...input.count {
      let pieces = [input[0..<split], input[split...]]
      if let finding = findingOfFeeding(pieces, expected: expected, makeDecoder, feed) {
        findings.append("split at \(split): \(finding)")
      }
    }
    let bytes = input.indices.map { input[$0...$0] }
    if let finding = findingOfFeeding(bytes, expected: expected, makeDecoder, feed) {
      findings.append("byte by byte: \(finding)")
    }
    return findings
  }

  /// The findings of decoding every proper prefix of `input` (each must be refused) and the whole
  /// (it must give `expected`).
  /// - Parameters:
  ///   - decode: the decoder; nil or an error is a refusal.
  ///   - isTruncation: whether an error is the one a cut-short input earns (by default any error is).
  public static func prefixFindings<Value: Equatable, Failure: Error>(
    _ input: [UInt8], expected: Value, decode: ([UInt8]) throws(Failure) -> Value?,
    isTruncation: (Failure) -> Bool = { _ in true }
  ) -> [String] {
    var findings: [String] = []
    for length in 0..<input.count {
      do {
        if let value = try decode(Array(input[0..<length])) {
          findings.append("prefix of \(length) of \(input.count) bytes gave a value: \(value)")
        }
      } catch {
        if !isTruncation(error) {
          findings.append("prefix of \(length) of \(input.count) bytes: \(error), not a truncation")
        }
      }
    }
    do {
      let value = try decode(input)
      if value != expected {
        findings.append(
          "the whole \(input.count) bytes gave \(value.map { "\($0)" } ?? "nil"), not \(expected)")
      }
    } catch {
      findings.append("the whole \(input.count) bytes: \(error)")
    }
    return findings
  }

  private static func findingOfFeeding<Decoder, Item: Equatable, Failure: Error>(
    _ pieces: [ArraySlice<UInt8>], expected: [Item], _ makeDecoder: () -> Decoder,
    _ feed: (inout Decoder, ArraySlice<UInt8>) throws(Failure) -> [Item]
  ) -> String? {
    var decoder = makeDecoder()
    var items: [Item] = []
    do {
      for piece in pieces { items += try feed(&decoder, piece) }
    } catch {
      return "\(error) after \(items.count) items"
    }
    guard items == expected else {
      return "\(items.count) items, expected \(expected.count)"
        + (zip(items, expected).enumerated().first { $0.element.0 != $0.element.1 }.map {
          ", the first different at \($0.offset)"
        } ?? "")
    }
    return nil
  }
}
