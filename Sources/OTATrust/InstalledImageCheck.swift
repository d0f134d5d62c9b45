import OTAWire

/// Whether the image a slot holds is still the one installed there: its length and CRC32 as the
/// boot state recorded them, and for an MCUboot image its own SHA-256 and signature. Run by the
/// boot stage and `otad status` on the running slot, so that rot is reported, not discovered.
public enum InstalledImageCheck: Equatable, Sendable, CustomStringConvertible {
  /// Checked and unchanged; the text says how it was checked.
  case intact(String)
  /// The bytes changed since they were installed, or the image fails its own check.
  case rotten(String)
  /// Nothing to check against: a raw image installed before any record of it (a factory image).
  case unchecked(String)

  public var isRotten: Bool { if case .rotten = self { true } else { false } }

  /// The value of the health check's `OTAD_IMAGE_CHECK`: `intact`, `rotten: …` or `unchecked: …`.
  public var description: String {
    switch self {
    case .intact: "intact"
    case .rotten(let why): "rotten: \(why)"
    case .unchecked(let why): "unchecked: \(why)"
    }
  }

  /// Checks `slot` against the length and CRC32 recorded when its image was installed (0 and 0 when
  /// none were) and what its image says of itself, in one pass over the image.
  public static func check<Source: ImageSource>(
    _ slot: SlotID, recorded: RecordedImage, reader: Source, policy: ImagePolicy
  ) throws(Source.ReadError) -> InstalledImageCheck {
    let changed = "slot \(slot) no longer holds the image installed there"
    switch try ImageVerifier.survey(reader: reader, policy: policy) {
    case .verified(let report):
      guard recorded.size > 0 else {
        return .intact(policy.requiresSignature ? "SHA-256 and signature" : "SHA-256")
      }
      guard report.size == UInt64(recorded.size), report.crc32 == recorded.crc32 else {
        return .rotten(
          "\(changed): \(report.size) bytes with CRC32 \(hex32(report.crc32)), installed \(recorded.size) with "
            + hex32(recorded.crc32))
      }
      return .intact(
        "length and CRC32 as installed, " + (policy.requiresSignature ? "SHA-256 and signature" : "SHA-256"))
    case .invalid(let problem):
      return .rotten("slot \(slot)'s image fails its check: \(problem)")
    case .unreadable(let why):
      return .rotten("slot \(slot) cannot be read: \(why)")
    case .unverifiable:
      guard recorded.size > 0 else {
        return .unchecked("slot \(slot) holds no MCUboot header and no length or CRC32 was recorded for it")
      }
      guard UInt64(recorded.size) <= reader.capacity else {
        return .rotten("\(changed): \(recorded.size) bytes were installed in a slot of \(reader.capacity)")
      }
      // A raw image: its bytes against the length and CRC32 recorded at install, nothing else.
      switch try ImageVerifier.verify(
        reader: reader, size: UInt64(recorded.size), expectedCRC: recorded.crc32, preparedVersion: .zero)
      {
      case .valid: return .intact("length and CRC32 as installed")
      case .invalid(let problem): return .rotten("\(changed): \(problem)")
      }
    }
  }
}

/// What the boot state recorded of an installed image: its length and CRC32 as transferred (0 for a
/// factory image: unknown).
public struct RecordedImage: Equatable, Sendable {
  public var size: UInt32
  public var crc32: UInt32

  public init(size: UInt32, crc32: UInt32) {
    self.size = size
    self.crc32 = crc32
  }
}
