import OTASystem
import Testing

@testable import OTABlueZ

/// The book of links folds the controller's events in, keyed by connection handle.
@Suite struct LinkFactsBookTests {
  typealias Events = HCILinkEventTests

  static func fold(_ packets: [[UInt8]], into book: inout LinkFactsBook) -> [LinkFactsBook.Change?] {
    packets.map { packet in HCILinkEvent(packet: packet).flatMap { book.fold($0) } }
  }

  @Test func aLinkIsOpenedUpdatedAndClosed() throws {
    var book = LinkFactsBook()
    let changes = Self.fold(
      [Events.connectionComplete, Events.dataLengthChange, Events.phyUpdate, Events.connectionUpdate],
      into: &book)
    guard case .opened(let opened) = changes[0] else {
      Issue.record("\(changes)")
      return
    }
    #expect(opened.peer == Events.peer && opened.role == .peripheral && opened.dataLength == nil)
    #expect(
      opened.description
        == "interval 30 ms, latency 0, timeout 720 ms, data length 27 octets (no change seen), PHY 1M (no PHY update seen)"
    )
    let facts = try #require(book.links[0x40])
    #expect(changes[3] == .updated(facts))
    #expect(facts.timing == LinkTiming(interval: 6, peripheralLatency: 0, supervisionTimeout: 100))
    #expect(facts.dataLength?.maxTxOctets == 251 && facts.dataLength?.maxRxTime == 2120)
    #expect(facts.phy?.tx == .le2M)
    #expect(
      facts.description
        == "interval 7.5 ms, latency 0, timeout 1000 ms, data length tx 251 rx 251 octets, PHY 2M")

    let closed = Self.fold([Events.disconnection], into: &book)
    #expect(closed == [.closed(facts, reason: 0x13)])
    #expect(book.links.isEmpty)
    // The peer's last link stays known after it closed, for a push's closing report.
    #expect(book.facts(for: Events.peer) == facts)
  }

  @Test func eventsForAHandleNeverSeenConnectedAreIgnored() {
    var book = LinkFactsBook()
    let changes = Self.fold([Events.dataLengthChange, Events.phyUpdate, Events.disconnection], into: &book)
    #expect(changes == [nil, nil, nil])
    #expect(book.links.isEmpty && book.facts(for: Events.peer) == nil)
  }

  @Test func aNewLinkToTheSamePeerReplacesTheLastOne() {
    var book = LinkFactsBook()
    _ = Self.fold(
      [
        Events.connectionComplete, Events.dataLengthChange, Events.disconnection,
        Events.enhancedConnectionComplete,
      ],
      into: &book)
    let facts = book.facts(for: Events.peer)
    #expect(facts?.handle == 0x41 && facts?.role == .central && facts?.dataLength == nil)
    #expect(book.links.keys.sorted() == [0x41])
  }

  @Test func twoLinksAreKeptApart() {
    var book = LinkFactsBook()
    var other = Events.enhancedConnectionComplete
    other[9] = 0x77  // the peer 11:22:33:44:55:77
    _ = Self.fold([Events.connectionComplete, other, Events.phyUpdate], into: &book)
    let otherPeer = BluetoothAddress(bytes: [0x11, 0x22, 0x33, 0x44, 0x55, 0x77])!
    #expect(book.facts(for: Events.peer)?.phy?.tx == .le2M)
    #expect(book.facts(for: otherPeer)?.phy == nil)
  }

  @Test func onlyTheLastPeersAreRemembered() {
    var book = LinkFactsBook()
    let peers = (0..<(LinkFactsBook.peersKept + 1)).map { UInt8($0) }
    for peer in peers {
      var packet = Events.connectionComplete
      packet[9] = peer
      packet[5] = peer
      _ = Self.fold([packet], into: &book)
      var disconnection = Events.disconnection
      disconnection[4] = peer
      _ = Self.fold([disconnection], into: &book)
    }
    #expect(book.links.isEmpty)
    func address(_ low: UInt8) -> BluetoothAddress {
      BluetoothAddress(bytes: [0x11, 0x22, 0x33, 0x44, 0x55, low])!
    }
    #expect(book.facts(for: address(0)) == nil)
    #expect(book.facts(for: address(1)) != nil)
    #expect(book.facts(for: address(UInt8(LinkFactsBook.peersKept))) != nil)
  }

  @Test func millisecondsAreWrittenWithoutNeedlessDigits() {
    #expect(LinkFacts.milliseconds(30) == "30")
    #expect(LinkFacts.milliseconds(7.5) == "7.5")
    #expect(LinkFacts.milliseconds(31.25) == "31.25")
    #expect(LinkFacts.milliseconds(4000) == "4000")
  }
}
