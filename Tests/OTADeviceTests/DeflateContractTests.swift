import OTAChecksum
import OTAWire
import Testing

/// docs/PROTOCOL.md, "A deflate payload is one whole raw-deflate stream and nothing else": what a
/// deflate or patch operation's payload may be, built block by block so each case is exactly the
/// stream it names.
@Suite struct DeflateContractTests {
  typealias Contract = ProtocolContractTests
  typealias Operations = OperationContractTests

  static let target = DeviceFixture.image(size: 4096, seed: 21)
  static let bytes = Array(target[0..<100])

  static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

  /// One stored block (RFC 1951 3.2.4): BFINAL, BTYPE 00, then LEN, NLEN and the bytes.
  static func storedBlock(_ bytes: [UInt8], final: Bool) -> [UInt8] {
    let length = UInt16(bytes.count)
    return [final ? 0x01 : 0x00] + le16(length) + le16(~length) + bytes
  }

  /// What zlib's Z_SYNC_FLUSH (or Z_FULL_FLUSH) leaves: the bytes in a block that is not the last,
  /// then the empty stored block that aligns the stream; no final block.
  static let syncFlushed = storedBlock(bytes, final: false) + storedBlock([], final: false)

  /// A deflate operation of `bytes.count` target bytes at offset 0 with `payload`.
  static func deflate(_ payload: [UInt8]) -> [UInt8] {
    Operations.op(0, 0x01, Contract.le32(UInt32(bytes.count)) + payload)
  }

  /// Sends `write`; true when the device stored its 100 bytes (the WINDOW over them passes).
  static func stores(_ write: [UInt8]) throws -> Bool {
    var bench = try Operations.bench(target: target)
    #expect(try bench.data(write).isEmpty, "no notification answers a data write")
    return bench.host.engine.coverage.contains(0..<100)
  }

  @Test func aFinalBlockEndsTheStream() throws {
    // The control case: the same bytes in one final stored block, and zlib's own Z_FINISH stream.
    // [P-DEFL-5]
    #expect(try Self.stores(Self.deflate(Self.storedBlock(Self.bytes, final: true))))
    #expect(try Self.stores(Self.deflate(RawDeflate.compress(Self.bytes))))
  }

  @Test func aSyncFlushedStreamIsRefusedThoughItProducedEveryByte() throws {
    // [P-DEFL-1]
    // zlib inflates all 100 bytes, then finds no final block: the stream is cut, not complete.
    var produced: [UInt8] = []
    #expect(throws: InflateError.tooShort(produced: 100, expected: 100)) {
      try RawDeflate.inflate(Self.syncFlushed, length: 100) { _, piece in produced += piece }
    }
    #expect(produced == Self.bytes)
    #expect(try !Self.stores(Self.deflate(Self.syncFlushed)))
    #expect(try !Self.stores(Self.deflate(Self.storedBlock(Self.bytes, final: false))))
    // A patch's differences are held to the same rule.
    let patch = Operations.op(0, 0x03, Contract.le32(0) + Contract.le32(100) + Self.syncFlushed)
    #expect(try !Self.stores(patch))
  }

  @Test func anythingAfterTheFinalBlockIsRefused() throws {
    // [P-DEFL-2]
    let whole = RawDeflate.compress(Self.bytes)
    #expect(try !Self.stores(Self.deflate(whole + [0x00])), "padding")
    #expect(try !Self.stores(Self.deflate(whole + RawDeflate.compress([1]))), "a second stream")
    #expect(try !Self.stores(Self.deflate(whole + [0x12, 0x34, 0x56, 0x78])), "a zlib trailer")
  }

  @Test func aZlibHeaderIsNotRawDeflate() throws {
    // [P-DEFL-3]
    #expect(try !Self.stores(Self.deflate([0x78, 0x9C] + RawDeflate.compress(Self.bytes))))
  }

  @Test func aRefusedPayloadIsCountedAndItsWindowReportsTheBytesMissing() throws {
    // [P-DEFL-4]
    var bench = try Operations.bench(target: Self.target)
    #expect(try bench.data(Self.deflate(Self.syncFlushed)).isEmpty)
    #expect(try bench.data(Self.deflate(RawDeflate.compress(Self.bytes) + [0])).isEmpty)
    #expect(try InfoRecord(bytes: bench.host.info().encoded).chunksDropped == 2)
    try bench.data(Operations.op(100, 0x00, Array(Self.target[100..<200])))
    let window = Contract.window(0, 200, CRC32.checksum(Self.target[0..<200]))
    #expect(try bench.controlBytes(window).isEmpty, "it waits for the bytes")
    // Missing-range reports are on (FEATURES 3): the grace passes and the gap is reported.
    let report: [UInt8] = [0x61] + Contract.le32(200) + Contract.le32(0) + [100, 0]
    #expect(try bench.tick(after: .milliseconds(400)) == [report])
  }
}
