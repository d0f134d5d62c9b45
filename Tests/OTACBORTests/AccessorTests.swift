import OTACBOR
import Testing

@Suite struct AccessorTests {
  @Test func mapsAreReadByTextKey() {
    let map = CBOR.textMap(["off": .unsigned(7), "data": .bytes([1]), "upgrade": .bool(true)])
    #expect(map["off"]?.unsignedValue == 7)
    #expect(map["data"]?.bytesValue == [1])
    #expect(map["upgrade"]?.boolValue == true)
    #expect(map["len"] == nil)
    #expect(CBOR.unsigned(1)["off"] == nil)
  }

  @Test func signedIntegersPickTheirMajorType() {
    #expect(CBOR.int(0) == .unsigned(0))
    #expect(CBOR.int(-1) == .negative(0))
    #expect(CBOR.int(Int64.min) == .negative(UInt64(Int64.max)))
    #expect(CBOR.negative(UInt64(Int64.max)).int64 == Int64.min)
    #expect(CBOR.negative(UInt64.max).int64 == nil)
    #expect(CBOR.unsigned(UInt64.max).int64 == nil)
  }

  @Test func headsAreTheShortestAtEveryBoundary() {
    #expect(CBOR.unsigned(23).encoded == [0x17])
    #expect(CBOR.unsigned(255).encoded == [0x18, 0xFF])
    #expect(CBOR.unsigned(256).encoded == [0x19, 0x01, 0x00])
    #expect(CBOR.unsigned(65_536).encoded == [0x1A, 0x00, 0x01, 0x00, 0x00])
    #expect(CBOR.unsigned(1 << 32).encoded == [0x1B, 0, 0, 0, 1, 0, 0, 0, 0])
  }
}
