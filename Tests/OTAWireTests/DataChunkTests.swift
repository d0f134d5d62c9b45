import Testing

@testable import OTAWire

@Suite struct DataChunkTests {
  @Test func decodesOffsetAndPayload() throws {
    let bytes: [UInt8] = [0x10, 0x27, 0x00, 0x00, 0xAA, 0xBB]  // offset 10000, two bytes
    let chunk = try DataChunk(bytes: bytes)
    #expect(chunk.offset == 10000)
    #expect(Array(chunk.payload) == [0xAA, 0xBB])
    #expect(chunk.end == 10002)
    #expect(chunk.encoded == bytes)
  }

  @Test func needsAtLeastOneImageByte() {
    for length in 0...4 {
      #expect(throws: WireError.self) { try DataChunk(bytes: [UInt8](repeating: 1, count: length)) }
    }
  }

  @Test func maxPayloadFollowsMTUAndBlueZLimit() {
    // [P-DATA-2]
    #expect(DataChunk.maxPayload(mtu: 23) == 16)
    #expect(DataChunk.maxPayload(mtu: 185) == 178)
    #expect(DataChunk.maxPayload(mtu: 247) == 240)
    #expect(DataChunk.maxPayload(mtu: 513) == 506)
    #expect(DataChunk.maxPayload(mtu: 517) == 506, "BlueZ 5.66 drops writes over 510 bytes")
  }
}
