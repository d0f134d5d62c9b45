import OTAStorage

/// Which image an SMP upload in progress is: the `sha` its client sent with the first chunk and the
/// length, kept beside the transfer journal so that a client that comes back (or a device that
/// restarted) resumes the same image, and only that one, at the offset the journal committed.
struct SMPUploadRecord: Equatable, Sendable {
  static let name = "smp.upload"
  /// A whole SHA-256: the only `sha` the device checks the uploaded bytes against.
  static let fullSHALength = 32

  var size: UInt32
  var sha: [UInt8]

  var encoded: [UInt8] {
    [
      UInt8(truncatingIfNeeded: size), UInt8(truncatingIfNeeded: size >> 8),
      UInt8(truncatingIfNeeded: size >> 16),
      UInt8(truncatingIfNeeded: size >> 24), UInt8(sha.count),
    ] + sha
  }

  init(size: UInt32, sha: [UInt8]) {
    self.size = size
    self.sha = sha
  }

  /// Nil for anything that is not a record this code wrote: a resume then simply does not happen.
  init?(bytes: [UInt8]) {
    guard bytes.count >= 5, Int(bytes[4]) == bytes.count - 5, bytes.count - 5 <= 32 else { return nil }
    size = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    sha = Array(bytes[5...])
  }

  static func load(_ records: any RecordStore) -> SMPUploadRecord? {
    guard let bytes = try? records.load(name) else { return nil }
    return SMPUploadRecord(bytes: bytes)
  }
}
