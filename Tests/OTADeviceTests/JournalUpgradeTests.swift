import OTABoot
import OTAChecksum
import OTAEngine
import OTAStorage
import OTAWire
import Testing

/// A device upgraded from the previous otad in the middle of a transfer: its journal is the old
/// `transfer.journal`, one 32-byte record that otad replaced whole after each window. The new otad
/// resumes from it, and its next write goes to the in-place file, after which the old one is gone.
@Suite struct JournalUpgradeTests {
  typealias Contract = ProtocolContractTests

  /// The previous otad's bytes for "receiving 10 000 bytes into slot B, version 2.0.0, 4096
  /// committed", spelled out by hand from docs/PROTOCOL.md rather than by today's encoder.
  static func oldJournalBytes(crc32: UInt32) -> [UInt8] {
    var bytes: [UInt8] = Array("OTAJ".utf8) + [1, 1, 2, 0]  // magic, format 1, slot B, receiving, 0
    bytes += Contract.le32(10_000) + Contract.le32(crc32) + Contract.versionBytes + Contract.le32(4096)
    bytes += Contract.le32(CRC32.checksum(bytes))
    return bytes
  }

  @Test func theOldJournalIsResumedAndReplacedByTheInPlaceFile() throws {
    // [P-DISK-5]
    var bench = try Contract.prepared(size: 10_000)
    _ = try Contract.send(&bench, 0..<4096)
    #expect(
      try bench.controlBytes(Contract.window(0, 4096, Contract.crc(0..<4096))) == [
        Contract.windowAnswer(0, 4096)
      ])
    // Back to what the previous otad left: only the old file, in the old format.
    let medium = bench.fixture.medium
    try medium.remove(TransferJournalStore.fileName)
    try medium.replace(
      TransferJournalStore.legacyFileName, with: Self.oldJournalBytes(crc32: Contract.crc(0..<10_000)))

    try bench.restart()
    // Resumed: STATUS says receiving, 4096 of 10 000 committed; nothing written yet.
    #expect(
      try bench.controlBytes([0x02])
        == [
          [0x60, 0x02, 0x00, 2] + Contract.le32(10_000) + Contract.le32(Contract.crc(0..<10_000))
            + Contract.le32(4096)
        ])
    #expect(bench.host.engine.transfer?.slot == .b)
    #expect(bench.host.startNotices.isEmpty)
    #expect(try medium.load(TransferJournalStore.legacyFileName) != nil)

    // The next committed window goes to the new file, and the old one goes.
    _ = try Contract.send(&bench, 4096..<8192)
    #expect(
      try bench.controlBytes(Contract.window(4096, 4096, Contract.crc(4096..<8192))) == [
        Contract.windowAnswer(0, 8192)
      ])
    #expect(try medium.load(TransferJournalStore.legacyFileName) == nil)
    #expect(try TransferJournalStore.peek(medium).value?.committedOffset == 8192)
    #expect(medium.recordNames().filter { $0.hasPrefix("transfer") } == [TransferJournalStore.fileName])

    // And the transfer completes from there.
    _ = try Contract.send(&bench, 8192..<10_000)
    #expect(
      try bench.controlBytes(Contract.window(8192, 1808, Contract.crc(8192..<10_000))) == [
        Contract.windowAnswer(0, 10_000)
      ])
    #expect(try bench.controlBytes([0x04]) == [[0x60, 0x04, 0x00]])
  }

  /// A cut between the first in-place write and the removal of the old file leaves both: the
  /// in-place file is the newer and wins, and the old file goes at the next write.
  @Test func bothFilesPresentTheInPlaceOneWins() throws {
    // [P-DISK-5]
    var bench = try Contract.prepared(size: 10_000)
    _ = try Contract.send(&bench, 0..<4096)
    #expect(
      try bench.controlBytes(Contract.window(0, 4096, Contract.crc(0..<4096))) == [
        Contract.windowAnswer(0, 4096)
      ])
    let medium = bench.fixture.medium
    var older = Self.oldJournalBytes(crc32: Contract.crc(0..<10_000))
    // The old file claims nothing committed (it was written before the window).
    older.replaceSubrange(24..<28, with: Contract.le32(0))
    older.replaceSubrange(28..<32, with: Contract.le32(CRC32.checksum(older[0..<28])))
    try medium.replace(TransferJournalStore.legacyFileName, with: older)

    try bench.restart()
    #expect(bench.host.engine.transfer?.committedOffset == 4096)
    _ = try Contract.send(&bench, 4096..<8192)
    #expect(
      try bench.controlBytes(Contract.window(4096, 4096, Contract.crc(4096..<8192))) == [
        Contract.windowAnswer(0, 8192)
      ])
    #expect(try medium.load(TransferJournalStore.legacyFileName) == nil)
  }

  /// ABORT with only the old file: it goes, and a restart does not bring the transfer back.
  @Test func abortRemovesTheOldFileToo() throws {
    var bench = try Contract.prepared(size: 10_000)
    let medium = bench.fixture.medium
    try medium.remove(TransferJournalStore.fileName)
    try medium.replace(
      TransferJournalStore.legacyFileName, with: Self.oldJournalBytes(crc32: Contract.crc(0..<10_000)))
    try bench.restart()
    #expect(bench.host.engine.transfer?.committedOffset == 4096)
    #expect(try bench.controlBytes([0x06]) == [[0x60, 0x06, 0x00]])
    #expect(try medium.load(TransferJournalStore.legacyFileName) == nil)
    #expect(try medium.load(TransferJournalStore.fileName) == nil)
    try bench.restart()
    #expect(bench.host.engine.transfer == nil)
  }
}
