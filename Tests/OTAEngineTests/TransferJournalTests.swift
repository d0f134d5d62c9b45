import OTAChecksum
import OTAJournal
import Testing

@testable import OTAEngine
@testable import OTAWire

@Suite struct TransferJournalTests {
  static let journal = TransferJournal(
    slot: .b, state: .receiving, size: 1 << 20, crc32: 0x1234_5678,
    version: Version(major: 1, minor: 2, revision: 3),
    committedOffset: 65536)

  @Test func roundTrips() throws {
    // [P-DISK-3]
    let bytes = Self.journal.encoded
    #expect(bytes.count == TransferJournal.byteCount)
    #expect(Array(bytes[0..<4]) == Array("OTAJ".utf8))
    #expect(try TransferJournal(bytes: bytes) == Self.journal)
  }

  @Test func theOwnerIsByteSevenAndAFormatOneJournalIsStillRead() throws {
    // [P-DISK-3] [P-SESS-5] [SEC-ATK-29]
    for owner in TransferOwner.allCases {
      var journal = Self.journal
      journal.owner = owner
      let bytes = journal.encoded
      #expect(bytes[4] == 2 && bytes[7] == owner.rawValue)
      #expect(try TransferJournal(bytes: bytes).owner == owner)
    }
    // Format 1: byte 7 was 0; the owner is SMP when the CRC32 is 0 (an SMP upload's), else OTA.
    func formatOne(_ journal: TransferJournal) -> [UInt8] {
      var bytes = Array(journal.encoded.prefix(28))
      bytes[4] = 1
      bytes[7] = 0
      let crc = CRC32.checksum(bytes)
      return bytes + [
        UInt8(crc & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8((crc >> 16) & 0xFF), UInt8(crc >> 24),
      ]
    }
    var smp = Self.journal
    smp.crc32 = 0
    #expect(try TransferJournal(bytes: formatOne(Self.journal)).owner == .ota)
    #expect(try TransferJournal(bytes: formatOne(smp)).owner == .smp)
    // An owner byte nobody wrote is damage.
    var unknown = Array(Self.journal.encoded.prefix(28))
    unknown[7] = 9
    let crc = CRC32.checksum(unknown)
    unknown += [UInt8(crc & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8((crc >> 16) & 0xFF), UInt8(crc >> 24)]
    #expect(throws: WireError.self) { try TransferJournal(bytes: unknown) }
  }

  @Test func everyFlippedBitIsDetected() {
    // [P-DISK-3] [SEC-CHECK-14]
    let bytes = Self.journal.encoded
    for bit in 0..<(bytes.count * 8) {
      var damaged = bytes
      damaged[bit / 8] ^= 1 << UInt8(bit % 8)
      #expect(throws: WireError.self, "bit \(bit)") { try TransferJournal(bytes: damaged) }
    }
  }

  @Test func truncatedOrInconsistentRecordsAreRefused() {
    // [SEC-LIMIT-3]
    let bytes = Self.journal.encoded
    for cut in 0..<bytes.count {
      #expect(throws: WireError.self) { try TransferJournal(bytes: Array(bytes[0..<cut])) }
    }
    var beyond = Self.journal
    beyond.committedOffset = beyond.size + 1
    #expect(throws: WireError.self) { try TransferJournal(bytes: beyond.encoded) }
    var validatedEarly = Self.journal
    validatedEarly.state = .validated
    #expect(throws: WireError.self) { try TransferJournal(bytes: validatedEarly.encoded) }
  }
}
