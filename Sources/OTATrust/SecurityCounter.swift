import OTAWire

/// The value of an image's SEC_CNT TLV (protected, so signed): MCUboot refuses an image whose
/// counter is below the one the device has already seen, which stops rollback to old, signed firmware.
public enum SecurityCounter: Sendable, Equatable, CustomStringConvertible {
  case value(UInt32)
  /// imgtool's `--security-counter auto`: `(major << 24) | (minor << 16) | revision` of the version.
  case fromVersion

  /// Parses `auto`, a decimal number or a `0x`/`0o`/`0b` literal that fits 32 bits.
  public init?(text: String) {
    if text.lowercased() == "auto" {
      self = .fromVersion
    } else if let number = NumberText.unsigned(text), let value = UInt32(exactly: number) {
      self = .value(value)
    } else {
      return nil
    }
  }

  /// The number written into the image for `version`.
  public func resolved(for version: Version) -> UInt32 {
    switch self {
    case .value(let value): value
    case .fromVersion: UInt32(version.major) << 24 | UInt32(version.minor) << 16 | UInt32(version.revision)
    }
  }

  public var description: String {
    switch self {
    case .value(let value): "\(value)"
    case .fromVersion: "auto"
    }
  }
}

/// Unsigned numbers as imgtool and C accept them: decimal, or `0x`, `0o`, `0b` prefixed.
public enum NumberText {
  public static func unsigned(_ text: String) -> UInt64? {
    let lowered = text.lowercased()
    // Integer parsing takes a sign; a size or an address has none.
    guard !lowered.contains("+"), !lowered.contains("-") else { return nil }
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where lowered.hasPrefix(prefix) {
      let digits = lowered.dropFirst(2)
      return digits.isEmpty ? nil : UInt64(digits, radix: radix)
    }
    return lowered.isEmpty ? nil : UInt64(lowered, radix: 10)
  }
}
