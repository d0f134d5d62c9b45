import Testing

@testable import OTASocketLink

@Suite struct AirTimeTests {
  @Test func writesAreCutIntoLinkLayerPackets() {
    let withDLE = AirTime(LinkConditions(mtu: 517, dataLength: 251))
    #expect(withDLE.cost(valueLength: 244).packets == 1, "244 + 7 = 251 bytes: one packet")
    #expect(withDLE.cost(valueLength: 245).packets == 2)
    #expect(withDLE.cost(valueLength: 510).packets == 3)
    let without = AirTime(LinkConditions(mtu: 23, dataLength: 27))
    #expect(without.cost(valueLength: 20).packets == 1)
    #expect(without.cost(valueLength: 240).packets == 10)
  }

  @Test func airTimeFollowsThePHY() {
    let slow = AirTime(LinkConditions(phy: .le1M)).cost(valueLength: 100).microseconds
    let fast = AirTime(LinkConditions(phy: .le2M)).cost(valueLength: 100).microseconds
    let coded = AirTime(LinkConditions(phy: .coded)).cost(valueLength: 100).microseconds
    #expect(fast < slow && slow < coded)
    // 1M: (107 + 10) bytes × 8 µs + 150 + 80 (empty acknowledgement) + 150.
    #expect(slow == 117 * 8 + 150 + 80 + 150)
  }

  @Test func rawCapacityIsBoundByPacketsOrAirTime() {
    // MTU 247 with DLE: one packet per write, 6 per 15 ms event → 6 × 244 bytes / 15 ms.
    let bounded = AirTime(LinkConditions(mtu: 247, connectionInterval: .milliseconds(15), packetsPerEvent: 6))
    #expect(abs(bounded.rawPayloadBytesPerSecond - 6 * 244 / 0.015) < 1)
    // With hundreds of packets allowed, the air time of a 7.5 ms event is the limit.
    let airBound = AirTime(
      LinkConditions(mtu: 247, connectionInterval: .microseconds(7500), packetsPerEvent: 1000, phy: .le1M))
    let perWrite = airBound.cost(valueLength: 244).microseconds
    #expect(abs(airBound.rawPayloadBytesPerSecond - 7500 / perWrite * 244 / 0.0075) < 1)
  }
}
