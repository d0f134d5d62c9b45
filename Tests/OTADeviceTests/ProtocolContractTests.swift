import OTABoot
import OTAChecksum
import OTAEngine
import OTAStorage
import OTAWire
import Testing

/// docs/PROTOCOL.md as a contract: each test names the statement it backs and checks it in the bytes
/// a central sends and gets back, against a device on in-memory storage (`ProtocolBench`, connected
/// at ATT MTU 247, window capacity 4096).
@Suite struct ProtocolContractTests {
  static let version = Version(major: 2, minor: 0, revision: 0)
  /// PREPARE's version field for 2.0.0: major, minor, revision u16, build u32.
  static let versionBytes: [UInt8] = [2, 0, 0, 0, 0, 0, 0, 0]

  static func le32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

  static func prepare(size: UInt32, crc32: UInt32) -> [UInt8] {
    [0x01] + le32(size) + le32(crc32) + versionBytes
  }

  static func window(_ offset: UInt32, _ length: UInt32, _ crc32: UInt32) -> [UInt8] {
    [0x03] + le32(offset) + le32(length) + le32(crc32)
  }

  static func windowAnswer(_ status: UInt8, _ offset: UInt32) -> [UInt8] {
    [0x60, 0x03, status] + le32(offset)
  }

  static func chunk(_ offset: UInt32, _ bytes: some Collection<UInt8>) -> [UInt8] { le32(offset) + bytes }

  static let image = DeviceFixture.image(size: 10_000, seed: 0xC0FFEE)

  static func crc(_ range: Range<Int>) -> UInt32 { CRC32.checksum(image[range]) }

  /// PREPAREs `image`'s first `size` bytes (PREPARE's CRC unless `crc32` is given).
  static func prepared(size: Int = 10_000, crc32: UInt32? = nil) throws -> ProtocolBench {
    var bench = try ProtocolBench()
    let answers = try bench.controlBytes(prepare(size: UInt32(size), crc32: crc32 ?? crc(0..<size)))
    // PREPARE, success: window capacity 4096, max chunk payload 240 (MTU 247).
    #expect(answers == [[0x60, 0x01, 0x00] + le32(4096) + [240, 0]])
    return bench
  }

  /// Sends `range` of the image in chunks of `payload` bytes; returns what the writes caused.
  static func send(_ bench: inout ProtocolBench, _ range: Range<Int>, payload: Int = 200) throws -> [[UInt8]]
  {
    var answers: [[UInt8]] = []
    for start in stride(from: range.lowerBound, to: range.upperBound, by: payload) {
      let end = min(start + payload, range.upperBound)
      answers += try bench.data(chunk(UInt32(start), image[start..<end]))
    }
    return answers
  }

  // MARK: Introduction

  @Test func everyCRC32IsZlibsCRC32() throws {
    // [P-INT-1] [P-INT-3] [P-RESP-2]
    // "the CRC32 of the nine ASCII bytes 123456789 is 0xCBF43926", and the device uses that CRC for
    // WINDOW and PREPARE/VALIDATE: a window and an image announced with it are accepted.
    let check = Array("123456789".utf8)
    #expect(CRC32.checksum(check) == 0xCBF4_3926)
    var bench = try ProtocolBench()
    #expect(
      try bench.controlBytes(Self.prepare(size: 9, crc32: 0xCBF4_3926))
        == [[0x60, 0x01, 0x00] + Self.le32(4096) + [240, 0]])
    try bench.data(Self.chunk(0, check))
    #expect(try bench.controlBytes(Self.window(0, 9, 0xCBF4_3926)) == [Self.windowAnswer(0x00, 9)])
    #expect(try bench.controlBytes([0x04]) == [[0x60, 0x04, 0x00]])
  }

  // MARK: Requests

  @Test func malformedRequestsAreAnsweredWithTheirStatus() throws {
    // [P-REQ-11] [P-RESP-1] [P-RESP-8] [SEC-CHECK-2]
    var bench = try ProtocolBench()
    // "not exactly the table's length: 0x02", "an unknown opcode 0x01" (echoed as it came),
    // "ACTIVATE with reserved flag bits 0x04", "an empty write: request opcode 0x00 and 0x02".
    #expect(try bench.controlBytes([0x02, 0x00]) == [[0x60, 0x02, 0x02]])
    #expect(try bench.controlBytes([0x7F]) == [[0x60, 0x7F, 0x01]])
    #expect(try bench.controlBytes([0x05, 0x02]) == [[0x60, 0x05, 0x04]])
    #expect(try bench.controlBytes([]) == [[0x60, 0x00, 0x02]])
  }

  @Test func windowAndValidateWithNoTransferAreInvalidState() throws {
    // [P-REQ-12] [P-ACT-1] [SEC-CHECK-12]
    var bench = try ProtocolBench()
    // "With no transfer (idle) WINDOW and VALIDATE answer 0x03 (WINDOW's answer carrying offset 0)".
    #expect(try bench.controlBytes(Self.window(0, 100, 0)) == [Self.windowAnswer(0x03, 0)])
    #expect(try bench.controlBytes([0x04]) == [[0x60, 0x04, 0x03]])
    // "ACTIVATE: 0x03 without a validated transfer".
    #expect(try bench.controlBytes([0x05, 0x00]) == [[0x60, 0x05, 0x03]])
    // "as does WINDOW once the transfer is validated".
    #expect(try bench.push(Array(Self.image[0..<300]), version: Self.version) == .success)
    #expect(try bench.controlBytes(Self.window(0, 100, 0)) == [Self.windowAnswer(0x03, 300)])
  }

  // MARK: Data

  @Test func maxChunkPayloadCountsImageBytesNotTheOffset() throws {
    // [P-DATA-2] [P-DATA-3] [SEC-LIMIT-2]
    // "a whole chunk is max chunk payload + 4 bytes (at MTU 247: 240 image bytes in a 244-byte write)".
    var bench = try Self.prepared()
    let whole = Self.chunk(0, Self.image[0..<240])
    #expect(whole.count == 247 - 3)
    try bench.data(whole)
    #expect(try bench.controlBytes(Self.window(0, 240, Self.crc(0..<240))) == [Self.windowAnswer(0x00, 240)])
    // "min(MTU − 3, 510) − 4": 16 at MTU 23, 506 at 517 (BlueZ 5.66's 510-byte limit).
    let host = try DeviceFixture(slotCapacity: 4096).makeHost()
    #expect(host.info(mtu: 23).maxChunkPayload == 16)
    #expect(host.info(mtu: 517).maxChunkPayload == 506)
  }

  @Test func droppedChunksAreCountedInInfo() throws {
    // [P-DATA-4] [P-DATA-5] [P-DATA-7] [SEC-CHECK-4]
    var bench = try ProtocolBench()
    try bench.data([0, 0, 0, 0])  // a write of 4 bytes or fewer
    try bench.data(Self.chunk(0, Self.image[0..<100]))  // any chunk while not receiving
    #expect(try bench.controlBytes(Self.prepare(size: 10_000, crc32: Self.crc(0..<10_000))).count == 1)
    try bench.data(Self.chunk(9900, Self.image[4000..<4200]))  // past the image's end
    try bench.data(Self.chunk(0, Self.image[0..<200]))  // stored: not counted
    try bench.data(Self.chunk(0, Self.image[0..<200]))  // stored already: skipped, not dropped
    let info = bench.host.info().encoded
    // "Info's chunks dropped (offset 70) counts them since the device started".
    #expect(info.count == 114)
    #expect(Array(info[70..<74]) == [3, 0, 0, 0])
    #expect(try InfoRecord(bytes: info).chunksDropped == 3)
  }

  // MARK: Windows

  @Test func aWindowIsOneByteToTheWindowCapacityWithinTheImage() throws {
    // [P-WIN-1] [P-WIN-5] [P-WIN-7] [SEC-CHECK-10] [SEC-LIMIT-2]
    var bench = try Self.prepared(size: 5000)
    // "A window's length must be 1 to the window capacity ... and it must end within the image, else 0x04".
    #expect(try bench.controlBytes(Self.window(0, 0, 0)) == [Self.windowAnswer(0x04, 0)])
    #expect(try bench.controlBytes(Self.window(0, 4097, 0)) == [Self.windowAnswer(0x04, 0)])
    _ = try Self.send(&bench, 0..<4096)
    #expect(
      try bench.controlBytes(Self.window(0, 4096, Self.crc(0..<4096))) == [Self.windowAnswer(0x00, 4096)])
    #expect(try bench.controlBytes(Self.window(4096, 905, 0)) == [Self.windowAnswer(0x04, 4096)])
    // "not starting at the committed offset: 0x04"; "wholly below it: success again".
    #expect(try bench.controlBytes(Self.window(4100, 100, 0)) == [Self.windowAnswer(0x04, 4096)])
    #expect(try bench.controlBytes(Self.window(0, 4096, 0)) == [Self.windowAnswer(0x00, 4096)])
  }

  @Test func fiveWindowsMayWaitASixthIsBusy() throws {
    // [P-REQ-13] [P-WIN-6] [P-TIME-1] [P-RESP-8] [SEC-LIMIT-2]
    var bench = try Self.prepared()
    // No data yet: each WINDOW waits for its chunks. "Up to 5 may wait ... A sixth is answered 0x0C
    // busy with the committed offset."
    for index in 0..<5 {
      let offset = UInt32(index * 100)
      #expect(
        try bench.controlBytes(Self.window(offset, 100, Self.crc(Int(offset)..<Int(offset) + 100))).isEmpty)
    }
    #expect(
      try bench.controlBytes(Self.window(500, 100, Self.crc(500..<600))) == [Self.windowAnswer(0x0C, 0)])
    // The five are answered in order once their data is there.
    let answers = try Self.send(&bench, 0..<500, payload: 100)
    #expect(answers == [100, 200, 300, 400, 500].map { Self.windowAnswer(0x00, $0) })
  }

  @Test func whenTheFirstWindowFailsTheWaitingOnesFailAndALaterOneIsInvalidParameter() throws {
    // [P-RESP-8] [P-WIN-3] [P-WIN-8]
    var bench = try Self.prepared()
    // Three WINDOWs wait for their data; the head's data arrives corrupted.
    for offset in [0, 100, 200] {
      #expect(
        try bench.controlBytes(Self.window(UInt32(offset), 100, Self.crc(offset..<offset + 100))).isEmpty)
    }
    _ = try Self.send(&bench, 100..<300, payload: 100)
    var corrupted = Array(Self.image[0..<100])
    corrupted[7] ^= 0x40
    // "every WINDOW waiting at that moment fails with the same status and offset, in order".
    #expect(
      try bench.data(Self.chunk(0, corrupted)) == Array(repeating: Self.windowAnswer(0x06, 0), count: 3))
    // "A WINDOW that arrives after those answers ... is answered 0x04 with the committed offset".
    #expect(
      try bench.controlBytes(Self.window(300, 100, Self.crc(300..<400))) == [Self.windowAnswer(0x04, 0)])
    // "0x06: the device forgets everything past the committed offset": resent, the window passes.
    _ = try Self.send(&bench, 0..<100, payload: 100)
    #expect(try bench.controlBytes(Self.window(0, 100, Self.crc(0..<100))) == [Self.windowAnswer(0x00, 100)])
  }

  @Test func missingDataAnswersTheFirstByteNotThereAndKeepsTheRest() throws {
    // [P-RESP-8] [P-WIN-2] [P-WIN-10]
    var bench = try Self.prepared()
    #expect(try bench.controlBytes(Self.window(0, 1000, Self.crc(0..<1000))).isEmpty, "it waits for its data")
    _ = try Self.send(&bench, 0..<200, payload: 100)
    _ = try Self.send(&bench, 400..<1000, payload: 100)
    // "fails it with missing data sooner if 16 chunks past the window's end were stored while the
    // gap stayed open"; "0x07 missing data: the first byte of the window that has not arrived".
    let later = try Self.send(&bench, 1000..<2600, payload: 100)
    #expect(later == [Self.windowAnswer(0x07, 200)])
    // "The device keeps what it stored; the central resends from there to the window's end".
    _ = try Self.send(&bench, 200..<400, payload: 100)
    #expect(
      try bench.controlBytes(Self.window(0, 1000, Self.crc(0..<1000))) == [Self.windowAnswer(0x00, 1000)])
  }

  // MARK: PREPARE and ABORT

  @Test func prepareRefusesWhatCannotBeInstalled() throws {
    // [P-RESP-8] [P-RESP-9] [P-PREP-1] [SEC-CHECK-3]
    var bench = try ProtocolBench(slotCapacity: 64 * 1024)
    // "0x05 above the slot's capacity, 0x04 for size 0, 0x0A for a version lower than the confirmed one".
    #expect(try bench.controlBytes(Self.prepare(size: 64 * 1024 + 1, crc32: 0)) == [[0x60, 0x01, 0x05]])
    #expect(try bench.controlBytes(Self.prepare(size: 0, crc32: 0)) == [[0x60, 0x01, 0x04]])
    let older: [UInt8] = [0x01] + Self.le32(100) + Self.le32(0) + [0, 9, 0, 0, 0, 0, 0, 0]  // 0.9.0
    #expect(try bench.controlBytes(older) == [[0x60, 0x01, 0x0A]])
    #expect(try bench.controlBytes([0x02]) == [[0x60, 0x02, 0x00, 0] + Array(repeating: 0, count: 12)])
  }

  @Test func abortDropsTheTransferAndItsJournal() throws {
    // [P-REQ-6]
    var bench = try Self.prepared(size: 600)
    _ = try Self.send(&bench, 0..<300)
    #expect(try bench.controlBytes(Self.window(0, 300, Self.crc(0..<300))) == [Self.windowAnswer(0x00, 300)])
    #expect(try bench.fixture.medium.load(TransferJournalStore.fileName) != nil)
    #expect(try bench.controlBytes([0x06]) == [[0x60, 0x06, 0x00]])
    #expect(try bench.controlBytes([0x02]) == [[0x60, 0x02, 0x00, 0] + Array(repeating: 0, count: 12)])
    #expect(try bench.fixture.medium.load(TransferJournalStore.fileName) == nil)
  }

  // MARK: VALIDATE and ACTIVATE

  @Test func validateOfAnIncompleteTransferIsMissingDataAndKeepsIt() throws {
    // [P-REQ-2] [P-RESP-3] [P-RESP-9] [P-VAL-1] [P-VAL-8]
    var bench = try Self.prepared(size: 600)
    _ = try Self.send(&bench, 0..<300)
    #expect(try bench.controlBytes(Self.window(0, 300, Self.crc(0..<300))) == [Self.windowAnswer(0x00, 300)])
    // "VALIDATE answers 0x07 if the transfer is not complete ... the transfer stays".
    #expect(try bench.controlBytes([0x04]) == [[0x60, 0x04, 0x07]])
    // STATUS: state 2 receiving, size 600, crc32, committed 300.
    #expect(
      try bench.controlBytes([0x02])
        == [[0x60, 0x02, 0x00, 2] + Self.le32(600) + Self.le32(Self.crc(0..<600)) + Self.le32(300)])
    _ = try Self.send(&bench, 300..<600)
    #expect(
      try bench.controlBytes(Self.window(300, 300, Self.crc(300..<600))) == [Self.windowAnswer(0x00, 600)])
    #expect(try bench.controlBytes([0x04]) == [[0x60, 0x04, 0x00]])
  }

  @Test func aValidationThatFailsOnTheImageDropsTheTransfer() throws {
    // [P-REQ-4] [P-VAL-2] [P-VAL-7] [SEC-CHECK-11] [SEC-SIG-6]
    // PREPARE announces a CRC32 the image does not have: every window passes, VALIDATE answers 0x06.
    var bench = try Self.prepared(size: 600, crc32: 0x1234_5678)
    _ = try Self.send(&bench, 0..<600)
    #expect(try bench.controlBytes(Self.window(0, 600, Self.crc(0..<600))) == [Self.windowAnswer(0x00, 600)])
    #expect(try bench.controlBytes([0x04]) == [[0x60, 0x04, 0x06]])
    // "drops the transfer and its journal: STATUS then says idle".
    #expect(try bench.controlBytes([0x02]) == [[0x60, 0x02, 0x00, 0] + Array(repeating: 0, count: 12)])
    #expect(try bench.fixture.medium.load(TransferJournalStore.fileName) == nil)
  }

  @Test func activateRefusedForTheImageDropsTheTransfer() throws {
    // [P-ACT-1] [SEC-CHECK-12]
    var bench = try ProtocolBench()
    let image = Array(Self.image[0..<600])
    #expect(try bench.push(image, version: Self.version) == .success)
    // The slot changes after VALIDATE: "ACTIVATE checks the image once more ... a failure answers
    // that check's status (0x06 ...) and drops the transfer".
    var altered = image
    altered[10] ^= 0xFF
    bench.fixture.medium.fill(.b, with: altered)
    #expect(try bench.controlBytes([0x05, 0x00]) == [[0x60, 0x05, 0x06]])
    #expect(try bench.controlBytes([0x02]) == [[0x60, 0x02, 0x00, 0] + Array(repeating: 0, count: 12)])
    #expect(bench.host.boot.trial == nil, "the boot pointer did not move")
  }

  @Test func confirmIsIdempotent() throws {
    // [P-REQ-7]
    var bench = try ProtocolBench()
    // "CONFIRM marks the running trial slot good (idempotent)": with no trial it answers success.
    #expect(try bench.controlBytes([0x07]) == [[0x60, 0x07, 0x00]])
    #expect(try bench.controlBytes([0x07]) == [[0x60, 0x07, 0x00]])
    #expect(!bench.host.runningOnTrial)
  }

  // MARK: Info

  @Test func infoGivesTheMaxChunkPayloadForTheReadersMTUBeforeAnyWrite() throws {
    // [P-INFO-13]
    // "max chunk payload ... at the MTU of the central reading Info, right from its first read": the
    // daemon's loop passes the read's MTU; no event has told the engine anything yet.
    let host = try DeviceFixture(slotCapacity: 4096).makeHost()
    #expect(host.engine.mtu == 23, "nothing connected yet")
    let bytes = host.info(mtu: 517).encoded
    #expect(Array(bytes[29..<31]) == [0xFA, 0x01])  // 506
    #expect(Array(host.info(mtu: 185).encoded[29..<31]) == [178, 0])
  }
}
