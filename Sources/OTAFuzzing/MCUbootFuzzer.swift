import OTAWire

/// The `mcuboot` fuzz target. The first byte picks how the rest is read:
/// - a whole image for `MCUbootImageLayout(parsing:)`;
/// - a header built from fields (bypassing the header decoder's checks) and TLV bytes for
///   `MCUbootImageLayout(header:tlvAreas:)`;
/// - TLV entries built from the input for `MCUbootTLVArea(kind:entries:)`, encoded and decoded back.
public enum MCUbootFuzzer {
  public static func check(_ input: [UInt8]) -> [InvariantViolation] {
    guard let selector = input.first else { return [] }
    let rest = Array(input.dropFirst())
    switch selector % 3 {
    case 0: return MCUbootLayoutChecks.parsedImage(rest)
    case 1: return MCUbootLayoutChecks.headerAndTLVs(rest)
    default: return MCUbootLayoutChecks.builtArea(rest)
    }
  }
}
