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

  /// Checks `slot` against what `state` recorded for it and what its image says of itself.
  public static func check(
    _ slot: SlotID, recorded: BootState.Slot, reader: any SlotReader, policy: ImagePolicy
  ) throws(StorageError) -> InstalledImageCheck {
    var checks: [String] = []
    if recorded.size > 0 {
      if let problem = try ImageVerifier.checkRecorded(
        reader: reader, size: recorded.size, crc32: recorded.crc32)
      {
        return .rotten("slot \(slot) no longer holds the image installed there: \(problem)")
      }
      checks.append("length and CRC32 as installed")
    }
    switch try ImageVerifier.survey(reader: reader, policy: policy) {
    case .verified(let report):
      if recorded.size > 0, report.size != UInt64(recorded.size) {
        return .rotten(
          "slot \(slot)'s MCUboot header describes \(report.size) bytes, \(recorded.size) were installed")
      }
      checks.append(policy.requiresSignature ? "SHA-256 and signature" : "SHA-256")
    case .invalid(let problem):
      return .rotten("slot \(slot)'s image fails its check: \(problem)")
    case .unreadable(let why):
      return .rotten("slot \(slot) cannot be read: \(why)")
    case .unverifiable:
      if checks.isEmpty {
        return .unchecked("slot \(slot) holds no MCUboot header and no length or CRC32 was recorded for it")
      }
    }
    return .intact(checks.joined(separator: ", "))
  }
}
