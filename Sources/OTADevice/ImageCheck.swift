import OTAEngine
import OTAStorage

/// The image check a device uses by default: length, CRC32, and for an MCUboot image its header,
/// TLV areas, SHA-256 and version, streamed once from the slot.
public enum StandardImageCheck {
  public static let check: ImageCheck = { reader, journal throws(StorageError) in
    let verdict = try ImageVerifier.verify(
      reader: reader, size: UInt64(journal.size), expectedCRC: journal.crc32, preparedVersion: journal.version
    )
    switch verdict {
    case .valid: return .valid
    case .invalid(let problem): return .invalid(problem.status, reason: problem.description)
    }
  }
}
