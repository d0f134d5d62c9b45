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

  @Test func everyFlippedBitIsDetected() {
    // [P-DISK-3]
    let bytes = Self.journal.encoded
    for bit in 0..<(bytes.count * 8) {
      var damaged = bytes
      damaged[bit / 8] ^= 1 << UInt8(bit % 8)
      #expect(throws: WireError.self, "bit \(bit)") { try TransferJournal(bytes: damaged) }
    }
  }

  @Test func truncatedOrInconsistentRecordsAreRefused() {
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
