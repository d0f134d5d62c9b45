import OTAChecksum
import OTAJournal
import OTAWire

/// The transfer journal is read back from disk after power cuts: it must refuse damage, and what it
/// accepts must be a record it would itself write, byte for byte, with offsets that make sense.
enum JournalRoundTrip {
  static func check(_ bytes: [UInt8]) -> [InvariantViolation] {
    guard let journal = try? TransferJournal(bytes: bytes) else { return [] }
    // Format 1 (no owner) is read and written back as format 2: equal once decoded again.
    var found =
      bytes[4] == 1
      ? ((try? TransferJournal(bytes: journal.encoded)) == journal
        ? [] : [.init("TransferJournal", "format 1 does not survive its rewrite as format 2")])
      : WireRoundTrips.canonical("TransferJournal", bytes, journal.encoded)
    if journal.size == 0 || journal.committedOffset > journal.size {
      found.append(
        .init("journal offsets", "accepted committed \(journal.committedOffset) of \(journal.size)"))
    }
    if journal.state != .receiving && journal.state != .validated {
      found.append(.init("journal state", "accepted state \(journal.state)"))
    }
    return found
  }

  /// The input's first 28 bytes (zero-padded) followed by their CRC32.
  static func withValidChecksum(_ bytes: [UInt8]) -> [UInt8] {
    var record = Array(bytes.prefix(28))
    record += [UInt8](repeating: 0, count: 28 - record.count)
    record.appendU32(CRC32.checksum(record))
    return record
  }
}
