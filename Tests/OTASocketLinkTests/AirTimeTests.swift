import Testing

@testable import OTASocketLink

/// The air model against figures worked by hand from the Core specification's packet formats.
@Suite struct AirTimeTests {
  static func air(_ spec: String) throws -> AirTime { AirTime(try LinkConditions(spec: spec)) }

  @Test func writesAreCutIntoLinkLayerPackets() {
    let withDLE = AirTime(LinkConditions(mtu: 517, dataLength: 251))
    #expect(withDLE.cost(valueLength: 244).packets == 1, "244 + 7 = 251 bytes: one packet")
    #expect(withDLE.cost(valueLength: 245).packets == 2)
    #expect(withDLE.fragments(attLength: 510 + 3) == [251, 251, 15])
    #expect(withDLE.fragments(attLength: 495 + 3) == [251, 251])
    let without = AirTime(LinkConditions(mtu: 23, dataLength: 27))
    #expect(without.cost(valueLength: 20).packets == 1)
    #expect(without.cost(valueLength: 240).packets == 10)
  }

  @Test func packetsCarryThePHYsFraming() throws {
    // 1M: preamble 1 + access address 4 + header 2 + CRC 3 = 10 bytes at 8 µs; 2M: 11 at 4 µs.
    #expect(try Self.air("phy=1M").packetMicroseconds(payload: 0) == 80, "the empty PDU on 1M")
    #expect(try Self.air("phy=2M").packetMicroseconds(payload: 0) == 44, "the empty PDU on 2M")
    #expect(try Self.air("phy=2M").packetMicroseconds(payload: 251) == 1048)
    // Encrypted, with the 4-byte MIC: the specification's longest packets, 2120 µs and 1064 µs.
    #expect(try Self.air("phy=1M,encrypt=on").packetMicroseconds(payload: 251) == 2120)
    #expect(try Self.air("phy=2M,encrypt=on").packetMicroseconds(payload: 251) == 1064)
    #expect(try Self.air("phy=2M,encrypt=on").packetMicroseconds(payload: 0) == 44, "no MIC on an empty PDU")
    // Coded S=8: 720 µs empty, 17040 µs the longest; S=2: 462 µs empty.
    #expect(try Self.air("phy=coded").packetMicroseconds(payload: 0) == 720)
    #expect(try Self.air("phy=coded,encrypt=on").packetMicroseconds(payload: 251) == 17040)
    #expect(try Self.air("phy=coded-s2").packetMicroseconds(payload: 0) == 462)
    // A write on its own: packet, T_IFS, empty acknowledgement, T_IFS.
    #expect(try Self.air("phy=1M").cost(valueLength: 100).microseconds == 936 + 150 + 80 + 150)
  }

  @Test func anEventHoldsOnlyWholeExchanges() throws {
    // 2M, DLE: 1048 + 150 + 44 = 1242 µs per exchange, 150 between: k exchanges need 1392k − 150.
    var short = ConnectionEvent(air: try Self.air("interval=7.5ms"), packetLimit: nil)
    var fitted = 0
    while short.fit(central: 251, peripheral: 0) { fitted += 1 }
    #expect(fitted == 5, "5 × 1392 − 150 = 6810 µs; a sixth would end at 8202")
    #expect(short.used == 6810)
    let shortFits = short.fit(central: 15, peripheral: 0)
    #expect(shortFits, "a short packet fits the 690 µs left: 6960 + 298")
    var long = ConnectionEvent(air: try Self.air("interval=15ms"), packetLimit: nil)
    fitted = 0
    while long.fit(central: 251, peripheral: 0) { fitted += 1 }
    #expect(fitted == 10, "10 × 1392 − 150 = 13770 µs; an eleventh would end at 15162")
    var limited = ConnectionEvent(air: try Self.air("interval=15ms"), packetLimit: 6)
    fitted = 0
    while limited.fit(central: 251, peripheral: 0) { fitted += 1 }
    #expect(fitted == 6, "the controller's limit")
    var answered = ConnectionEvent(air: try Self.air("interval=7.5ms"), packetLimit: nil)
    fitted = 0
    while answered.fit(central: 251, peripheral: 251) { fitted += 1 }
    #expect(fitted == 3, "a peripheral packet of 251 bytes: 2246 µs exchanges, 3 × 2396 − 150 = 7038")
  }

  @Test func capacityAtTheIssuesSettings() throws {
    // 2M, DLE, 7.5 and 15 ms, no packet limit: 5 and 10 packets per event of 244 value bytes.
    let fast = try Self.air("interval=7.5ms,mtu=247")
    #expect(abs(fast.valueBytesPerSecond(valueLength: 244, packetLimit: nil) - 5 * 244 / 0.0075) < 1)
    #expect(abs(fast.valueBytesPerSecond(valueLength: 495, packetLimit: nil) - 2.5 * 495 / 0.0075) < 5)
    let slow = try Self.air("interval=15ms,mtu=247")
    #expect(abs(slow.valueBytesPerSecond(valueLength: 244, packetLimit: nil) - 10 * 244 / 0.015) < 1)
    #expect(abs(slow.physicalCeilingBytesPerSecond - 5 * 495 / 0.015) < 5, "165 kB/s at 15 ms")
    // The event's length bounds it too: 3.75 ms holds two full exchanges (2634 µs) and a short
    // one of 298 µs after them, so there a 510-byte write (251 + 251 + 15) per event does best.
    let shortEvents = try Self.air("interval=15ms,event=3.75ms")
    #expect(abs(shortEvents.valueBytesPerSecond(valueLength: 495, packetLimit: nil) - 495 / 0.015) < 1)
    #expect(abs(shortEvents.physicalCeilingBytesPerSecond - 510 / 0.015) < 1)
    // Continuous, no gaps between events: ~175 kB/s, the radio's own limit on 2M with DLE.
    #expect(abs(slow.continuousBytesPerSecond(valueLength: 244) - 244 / 1392e-6) < 1)
    #expect(slow.continuousBytesPerSecond(valueLength: 244) > 175_000)
    #expect(slow.continuousBytesPerSecond(valueLength: 244) < 176_000)
  }

  @Test func rawCapacityIsTheModelsForTheLinksSettings() throws {
    // 6 packets per 15 ms event: 6 writes of 244 at MTU 247; at MTU 517, 3 writes of 495 (not
    // 2 of 510, whose third packet wastes a slot).
    #expect(
      abs(try Self.air("mtu=247,interval=15ms,packets=6").rawPayloadBytesPerSecond - 6 * 244 / 0.015) < 1)
    #expect(
      abs(try Self.air("mtu=517,interval=15ms,packets=6").rawPayloadBytesPerSecond - 3 * 495 / 0.015) < 1)
    // With hundreds of packets allowed, air time is the limit: the physical ceiling at MTU 517.
    let airBound = try Self.air("mtu=517,interval=15ms,packets=1000")
    #expect(abs(airBound.rawPayloadBytesPerSecond - airBound.physicalCeilingBytesPerSecond) < 1)
  }
}
