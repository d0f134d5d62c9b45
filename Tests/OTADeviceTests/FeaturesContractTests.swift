import OTAChecksum
import OTAWire
import Testing

/// docs/PROTOCOL.md's FEATURES (opcode 0x08): a device that announces none, the set it replaces,
/// and a data write that comes before its answer.
@Suite struct FeaturesContractTests {
  typealias Contract = ProtocolContractTests
  typealias Reports = MissingRangeContractTests

  static func features(_ wanted: UInt32) -> [UInt8] { [0x08] + Contract.le32(wanted) }
  static func answer(_ on: UInt32) -> [UInt8] { [0x60, 0x08, 0x00] + Contract.le32(on) }

  /// A raw operation (kind 0x00) of the image's `range`.
  static func raw(_ range: Range<Int>) -> [UInt8] {
    Contract.le32(UInt32(range.lowerBound)) + [0x00] + Contract.image[range]
  }

  @Test func aDeviceThatAnnouncesNoFeaturesAnswersUnknownOpcode() throws {
    // [P-REQ-9]
    var bench = try ProtocolBench(features: [])
    #expect(try InfoRecord(bytes: bench.host.info().encoded).features == [])
    #expect(try bench.controlBytes(Self.features(1)) == [[0x60, 0x08, 0x01]])
    #expect(try bench.controlBytes(Self.features(0)) == [[0x60, 0x08, 0x01]])
    // The same device with features answers: the refusal is the device's, not the request's.
    var featured = try ProtocolBench()
    #expect(try featured.controlBytes(Self.features(1)) == [Self.answer(1)])
  }

  @Test func featuresReplacesTheSetItDoesNotAddToIt() throws {
    // [P-REQ-8] [P-RESP-5]
    var bench = try Contract.prepared()
    #expect(try bench.controlBytes(Self.features(1)) == [Self.answer(1)])
    #expect(try bench.controlBytes(Self.features(2)) == [Self.answer(2)], "bit 0 is off again")
    // Operations are on (a raw operation stores its bytes), missing-range reports are off: a gap
    // proven by 16 later writes and 100 ms is not reported.
    _ = try bench.data(Self.raw(0..<100))
    for start in stride(from: 200, to: 1700, by: 100) {
      #expect(try bench.data(Self.raw(start..<start + 100)).isEmpty)
    }
    _ = try bench.tick(after: .milliseconds(100))
    #expect(try bench.data(Self.raw(1700..<1800)).isEmpty, "no report: bit 0 was replaced")
    #expect(bench.host.engine.statistics.operationsApplied == 17)
    #expect(bench.host.engine.statistics.missingReports == 0)
  }

  @Test func aDataWriteBeforeFeaturesAnswerIsAPlainChunk() throws {
    // [P-OP-2] [P-OP-11]
    var bench = try Contract.prepared()
    // Sent as an operation, taken as a chunk: its kind byte lands in the image at offset 0.
    try bench.data(Self.raw(0..<100))
    #expect(
      try bench.controlBytes(Contract.window(0, 101, Contract.crc(0..<101))) == [
        Contract.windowAnswer(0x06, 0)
      ])
    // After FEATURES' answer the same write is an operation.
    #expect(try bench.controlBytes(Self.features(2)) == [Self.answer(2)])
    try bench.data(Self.raw(0..<100))
    #expect(
      try bench.controlBytes(Contract.window(0, 100, Contract.crc(0..<100))) == [
        Contract.windowAnswer(0x00, 100)
      ])
    // FEATURES(0) turns them off again: a write is a plain chunk once more.
    #expect(try bench.controlBytes(Self.features(0)) == [Self.answer(0)])
    try bench.data(Contract.chunk(100, Contract.image[100..<200]))
    #expect(
      try bench.controlBytes(Contract.window(100, 100, Contract.crc(100..<200)))
        == [Contract.windowAnswer(0x00, 200)])
  }
}
