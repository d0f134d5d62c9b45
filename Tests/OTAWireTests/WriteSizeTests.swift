import Testing

@testable import OTAWire

/// The value bytes per data write, as a pure function of the ATT MTU and the link-layer data length.
@Suite struct WriteSizeTests {
  /// (MTU, data length, value bytes `auto` picks): worked by hand, n × DL − 7 ≤ min(MTU − 3, 510).
  static let cases: [(mtu: ATTMTU, dataLength: Int, value: Int)] = [
    (517, 251, 495),  // 2 × 251 − 7: two whole packets, not 251 + 251 + 15
    (498, 251, 495),  // the smallest MTU that carries it
    (497, 251, 244),  // one short: back to one packet
    (300, 251, 244),  // 297 would be 251 + 53
    (247, 251, 244),  // MTU − 3 exactly fills one packet
    (185, 251, 182),  // less than a packet: the MTU bounds it
    (23, 251, 20),
    (23, 27, 20),  // 27 − 7
    (247, 27, 236),  // 9 × 27 − 7, not 244 (10 packets, the last of 8 bytes)
    (517, 27, 506),  // 19 × 27 − 7 within the 510 BlueZ delivers
    (400, 27, 371),  // 14 × 27 − 7, not 397
    (100, 27, 74),  // 3 × 27 − 7
    (517, 100, 493),  // any data length: 5 × 100 − 7
  ]

  @Test(arguments: cases) func autoFillsWholeLinkLayerPackets(
    _ example: (mtu: ATTMTU, dataLength: Int, value: Int)
  ) {
    #expect(WriteSize.auto.valueLength(mtu: example.mtu, dataLength: example.dataLength) == example.value)
    let frame = example.value + WriteSize.frameOverhead
    if example.value < example.mtu.maxWriteValue, example.value < DataChunk.largestWrite {
      #expect(frame % example.dataLength == 0, "a shorter write than the MTU allows only to fill packets")
    }
  }

  @Test func aFixedSizeIsCappedByTheMTUAndBlueZ() {
    // [P-DATA-1]
    #expect(WriteSize.fixed(200).valueLength(mtu: 517, dataLength: 251) == 200)
    #expect(WriteSize.fixed(510).valueLength(mtu: 247, dataLength: 251) == 244)
    #expect(WriteSize.fixed(600).valueLength(mtu: 517, dataLength: 251) == 510)
  }

  @Test func parsesTheCommandLineForm() {
    #expect(WriteSize("auto") == .auto)
    #expect(WriteSize("AUTO") == .auto)
    #expect(WriteSize("495") == .fixed(495))
    #expect(WriteSize("4") == nil, "a chunk needs its 4-byte offset and at least one image byte")
    #expect(WriteSize("big") == nil)
  }
}
