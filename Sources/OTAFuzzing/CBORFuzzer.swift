import OTACBOR
import OTASMP

/// The `cbor` fuzz target: the first byte picks what the rest feeds. Bytes from the air must be
/// refused with a typed error (a trap is a crash); what decodes must re-encode canonically; the SMP
/// server must answer every request with a well-formed response to that request.
public enum CBORFuzzer {
  public enum Decoder: UInt8, CaseIterable, Sendable {
    /// `CBORDecoder.decode` with tight limits, and its round trip.
    case cbor
    /// One message through `SMPServer.handle`.
    case smpMessage
    /// A byte stream through `SMPFrameAssembler`, whole and cut into pieces.
    case smpStream
  }

  public static func check(_ input: [UInt8]) -> [InvariantViolation] {
    guard let selector = input.first else { return [] }
    let rest = Array(input.dropFirst())
    switch Decoder.allCases[Int(selector) % Decoder.allCases.count] {
    case .cbor: return cbor(rest)
    case .smpMessage: return SMPServerCheck.message(rest)
    case .smpStream: return SMPServerCheck.stream(rest)
    }
  }

  static func cbor(_ bytes: [UInt8]) -> [InvariantViolation] {
    let limits = CBORLimits(maxDepth: 6, maxItems: 256, maxBytes: 4096)
    guard let item = try? CBORDecoder.decode(bytes, limits: limits) else { return [] }
    let encoded = item.encoded
    guard
      let again = try? CBORDecoder.decode(
        encoded, limits: CBORLimits(maxDepth: 6, maxItems: 256, maxBytes: 1 << 20))
    else {
      return [
        InvariantViolation("round trip", "the encoding of an accepted item does not decode: \(encoded)")
      ]
    }
    guard again == item else {
      return [InvariantViolation("round trip", "\(item) re-decodes as \(again)")]
    }
    if again.encoded != encoded {
      return [InvariantViolation("canonical", "encoding is not stable for \(item)")]
    }
    return []
  }
}
