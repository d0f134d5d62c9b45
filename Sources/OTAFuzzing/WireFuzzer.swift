/// The `wire` fuzz target: the first input byte picks a decoder, the rest is its input. Every decoder
/// must refuse bad bytes with a `WireError` (a trap is a crash), and whatever it accepts must survive
/// a round trip: canonical formats re-encode to the very bytes they came from.
public enum WireFuzzer {
  public enum Decoder: UInt8, CaseIterable, Sendable {
    case request, response, dataChunk, infoRecord, version, versionText, longRead
    case journal
    /// The journal with its CRC32 computed over the input, so the fields behind it get fuzzed too.
    case journalWithValidChecksum
  }

  public static func check(_ input: [UInt8]) -> [InvariantViolation] {
    guard let selector = input.first else { return [] }
    let decoder = Decoder.allCases[Int(selector) % Decoder.allCases.count]
    return check(decoder, Array(input.dropFirst()))
  }

  public static func check(_ decoder: Decoder, _ bytes: [UInt8]) -> [InvariantViolation] {
    switch decoder {
    case .request: WireRoundTrips.request(bytes)
    case .response: WireRoundTrips.response(bytes)
    case .dataChunk: WireRoundTrips.dataChunk(bytes)
    case .infoRecord: WireRoundTrips.infoRecord(bytes)
    case .version: WireRoundTrips.version(bytes)
    case .versionText: WireRoundTrips.versionText(bytes)
    case .longRead: LongReadCheck.check(bytes)
    case .journal: JournalRoundTrip.check(bytes)
    case .journalWithValidChecksum: JournalRoundTrip.check(JournalRoundTrip.withValidChecksum(bytes))
    }
  }
}
