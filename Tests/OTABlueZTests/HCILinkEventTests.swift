import OTASystem
import OTATestSupport
import OTAWire
import Testing

@testable import OTABlueZ

/// The controller's link events as a raw HCI socket reads them (the packet type 0x04, the event
/// code, the parameter length, the parameters), built from the layouts in the Core spec, Vol 4
/// Part E 7.7.5 and 7.7.65.x. Multi-byte fields are little-endian; addresses least significant
/// byte first.
@Suite struct HCILinkEventTests {
  static let peer = BluetoothAddress(bytes: [0x11, 0x22, 0x33, 0x44, 0x55, 0x66])!

  /// 7.7.65.1 LE Connection Complete: event 0x3E, 19 parameter bytes.
  static let connectionComplete: [UInt8] = [
    0x04, 0x3E, 0x13,
    0x01,  // subevent: LE Connection Complete
    0x00,  // status: success
    0x40, 0x00,  // handle 0x0040
    0x01,  // role: peripheral
    0x00,  // peer address type: public
    0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // 11:22:33:44:55:66
    0x18, 0x00,  // interval 24 x 1.25 ms = 30 ms
    0x00, 0x00,  // peripheral latency 0
    0x48, 0x00,  // supervision timeout 72 x 10 ms = 720 ms
    0x00,  // central clock accuracy
  ]

  /// 7.7.65.10 LE Enhanced Connection Complete: 31 parameter bytes.
  static let enhancedConnectionComplete: [UInt8] =
    [
      0x04, 0x3E, 0x1F,
      0x0A,  // subevent: LE Enhanced Connection Complete
      0x00,  // status
      0x41, 0x00,  // handle 0x0041
      0x00,  // role: central
      0x01,  // peer address type: random
      0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
    ] + [UInt8](repeating: 0, count: 12)  // local and peer resolvable private addresses
    + [
      0x28, 0x00,  // interval 40 x 1.25 ms = 50 ms
      0x02, 0x00,  // latency 2
      0xF4, 0x01,  // timeout 500 x 10 ms = 5 s
      0x01,  // clock accuracy
    ]

  /// 7.7.65.3 LE Connection Update Complete: 10 parameter bytes.
  static let connectionUpdate: [UInt8] = [
    0x04, 0x3E, 0x0A,
    0x03, 0x00,  // subevent, status
    0x40, 0x00,  // handle
    0x06, 0x00,  // interval 6 x 1.25 ms = 7.5 ms
    0x00, 0x00,  // latency 0
    0x64, 0x00,  // timeout 100 x 10 ms = 1 s
  ]

  /// 7.7.65.7 LE Data Length Change: 11 parameter bytes, no status.
  static let dataLengthChange: [UInt8] = [
    0x04, 0x3E, 0x0B,
    0x07,  // subevent
    0x40, 0x00,  // handle
    0xFB, 0x00,  // max TX octets 251
    0x48, 0x08,  // max TX time 2120 µs
    0xFB, 0x00,  // max RX octets 251
    0x48, 0x08,  // max RX time 2120 µs
  ]

  /// 7.7.65.12 LE PHY Update Complete: 6 parameter bytes.
  static let phyUpdate: [UInt8] = [
    0x04, 0x3E, 0x06,
    0x0C, 0x00,  // subevent, status
    0x40, 0x00,  // handle
    0x02, 0x02,  // TX PHY 2M, RX PHY 2M
  ]

  /// 7.7.5 Disconnection Complete: event 0x05, 4 parameter bytes.
  static let disconnection: [UInt8] = [
    0x04, 0x05, 0x04,
    0x00,  // status
    0x40, 0x00,  // handle
    0x13,  // reason: remote user terminated the connection
  ]

  static let all = [
    connectionComplete, enhancedConnectionComplete, connectionUpdate, dataLengthChange, phyUpdate,
    disconnection,
  ]

  @Test func eachEventGivesItsFacts() {
    #expect(
      HCILinkEvent(packet: Self.connectionComplete)
        == .connected(
          handle: 0x40, role: .peripheral, peer: Self.peer,
          timing: LinkTiming(interval: 24, peripheralLatency: 0, supervisionTimeout: 72)))
    #expect(
      HCILinkEvent(packet: Self.enhancedConnectionComplete)
        == .connected(
          handle: 0x41, role: .central, peer: Self.peer,
          timing: LinkTiming(interval: 40, peripheralLatency: 2, supervisionTimeout: 500)))
    #expect(
      HCILinkEvent(packet: Self.connectionUpdate)
        == .connectionUpdated(
          handle: 0x40, timing: LinkTiming(interval: 6, peripheralLatency: 0, supervisionTimeout: 100)))
    #expect(
      HCILinkEvent(packet: Self.dataLengthChange)
        == .dataLengthChanged(
          handle: 0x40, LinkDataLength(maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120)))
    #expect(HCILinkEvent(packet: Self.phyUpdate) == .phyUpdated(handle: 0x40, tx: .le2M, rx: .le2M))
    #expect(HCILinkEvent(packet: Self.disconnection) == .disconnected(handle: 0x40, reason: 0x13))
  }

  @Test func theV2EnhancedEventCarriesTwoMoreHandles() {
    var packet = Self.enhancedConnectionComplete
    packet[2] = 0x22
    packet[3] = 0x29
    packet += [0x00, 0xFF, 0xFF]  // advertising handle, sync handle
    guard case .connected(let handle, _, let peer, let timing) = HCILinkEvent(packet: packet) else {
      Issue.record("not parsed")
      return
    }
    #expect(handle == 0x41 && peer == Self.peer && timing.intervalMilliseconds == 50)
    // Without its two extra fields it is truncated.
    packet[2] = 0x1F
    #expect(HCILinkEvent(packet: Array(packet.dropLast(3))) == nil)
  }

  /// A raw HCI socket reads one whole packet at a time, so the HCI event reader is a whole-buffer
  /// decoder: every proper prefix of each event is nil (a cut event is no fact), the whole its fact.
  @Test func hciLinkEventRefusesEveryPrefixAndReadsTheWholeEvent() throws {
    for packet in Self.all {
      let whole = try #require(HCILinkEvent(packet: packet))
      let findings = DecoderVerifier.prefixFindings(packet, expected: whole) { bytes throws(Never) in
        HCILinkEvent(packet: bytes)
      }
      #expect(findings.isEmpty, "\(findings)")
    }
  }

  @Test func aLengthThatLiesShortIsNil() {
    // The bytes are all there but the parameter length covers less than the subevent needs.
    for packet in Self.all {
      var short = packet
      short[2] -= 1
      #expect(HCILinkEvent(packet: short) == nil, "\(packet)")
    }
  }

  @Test func failedStatusesAreNotFacts() {
    // A connection that failed, an update or PHY change that failed, a disconnection that failed.
    for (packet, statusAt) in [
      (Self.connectionComplete, 4), (Self.enhancedConnectionComplete, 4), (Self.connectionUpdate, 4),
      (Self.phyUpdate, 4), (Self.disconnection, 3),
    ] {
      var failed = packet
      failed[statusAt] = 0x3E  // connection failed to be established
      #expect(HCILinkEvent(packet: failed) == nil, "\(packet)")
    }
  }

  @Test func valuesOutsideTheSpecsRangesAreNil() {
    var interval = Self.connectionComplete
    interval[15] = 0x05  // 5 x 1.25 ms: below 7.5 ms
    #expect(HCILinkEvent(packet: interval) == nil)
    var latency = Self.connectionUpdate
    latency[10] = 0x02  // 0x0200 > 0x01F3
    #expect(HCILinkEvent(packet: latency) == nil)
    var timeout = Self.connectionUpdate
    timeout[11] = 0x09  // 90 ms
    #expect(HCILinkEvent(packet: timeout) == nil)
    var octets = Self.dataLengthChange
    octets[6] = 0xFC  // 252 octets
    #expect(HCILinkEvent(packet: octets) == nil)
    var phy = Self.phyUpdate
    phy[7] = 0x04
    #expect(HCILinkEvent(packet: phy) == nil)
    var role = Self.connectionComplete
    role[7] = 0x02
    #expect(HCILinkEvent(packet: role) == nil)
    var handle = Self.disconnection
    handle[5] = 0x0F  // 0x0F40: reserved handles
    #expect(HCILinkEvent(packet: handle) == nil)
  }

  @Test func theHandlesFlagBitsAreNotPartOfIt() {
    var packet = Self.disconnection
    packet[5] = 0x20  // 0x2040: packet boundary flag bits above the 12-bit handle
    #expect(HCILinkEvent(packet: packet) == .disconnected(handle: 0x40, reason: 0x13))
  }

  @Test func otherEventsAndPacketsAreNil() {
    var advertisingReport = Self.connectionComplete
    advertisingReport[3] = 0x02
    #expect(HCILinkEvent(packet: advertisingReport) == nil)
    var commandComplete = Self.disconnection
    commandComplete[1] = 0x0E
    #expect(HCILinkEvent(packet: commandComplete) == nil)
    var acl = Self.disconnection
    acl[0] = 0x02
    #expect(HCILinkEvent(packet: acl) == nil)
  }

  @Test func extraTrailingBytesAreIgnored() {
    var longer = Self.connectionUpdate
    longer[2] += 2
    longer += [0xAA, 0xBB]
    #expect(HCILinkEvent(packet: longer) == HCILinkEvent(packet: Self.connectionUpdate))
  }

  @Test func randomBytesNeverTrap() {
    var generator = SeededGenerator(seed: 17)
    var parsed = 0
    for _ in 0..<20_000 {
      let count = Int(generator.next() % 48)
      var packet = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
      // Most of them as plausible event headers, so the parser gets past its first checks.
      if count >= 4, generator.next() % 4 != 0 {
        packet[0] = 0x04
        packet[1] = generator.next() % 2 == 0 ? 0x3E : 0x05
        packet[2] = UInt8(count - 3)
        if packet[1] == 0x3E { packet[3] = [0x01, 0x03, 0x07, 0x0A, 0x0C, 0x29][Int(generator.next() % 6)] }
      }
      if HCILinkEvent(packet: packet) != nil { parsed += 1 }
    }
    // Some random events are valid ones; the point is that none trapped.
    #expect(parsed < 20_000)
  }

  @Test func theAdaptersNumberComesFromItsName() {
    #expect(LinkFactsMonitor.deviceNumber("hci0") == 0)
    #expect(LinkFactsMonitor.deviceNumber("hci12") == 12)
    #expect(LinkFactsMonitor.deviceNumber("hci") == nil)
    #expect(LinkFactsMonitor.deviceNumber("usb0") == nil)
  }
}
