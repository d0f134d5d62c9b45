import OTADBus
import OTALink
import Testing

@testable import OTABlueZ

/// The inbox names the central of every Nordic DFU write and of every departure: whose session a
/// write belongs to is the daemon's to decide (a second central no longer ends the first's).
@Suite struct PeripheralInboxNordicTests {
  static let first: DBusObjectPath = "/org/bluez/hci0/dev_11_22_33_44_55_66"
  static let second: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"

  @Test func writesAndDeparturesNameTheirCentral() {
    let inbox = PeripheralInbox()
    inbox.nordicDFUWrite(.legacy, [0x01, 0x04], ["device": .objectPath(Self.first)], control: true)
    inbox.nordicDFUWrite(.legacy, [0x06], ["device": .objectPath(Self.second)], control: true)
    inbox.nordicDFUWrite(.legacy, [0xAA], ["device": .objectPath(Self.first)], control: false)
    #expect(
      inbox.events == [
        .nordicDFUControl(.legacy, central: Self.first.rawValue, [0x01, 0x04]),
        .nordicDFUControl(.legacy, central: Self.second.rawValue, [0x06]),
        .nordicDFUPacket(.legacy, central: Self.first.rawValue, [0xAA]),
      ], "a second central's write is its own, not the end of the first's session")
    inbox.events.removeAll()
    inbox.nordicDFUNotifying.insert(.legacy)
    inbox.forgetNordicDFUCentral(Self.second)
    #expect(inbox.events == [.nordicDFUCentralGone(.legacy, central: Self.second.rawValue)])
    #expect(inbox.nordicDFUNotifying.contains(.legacy), "the first central is still there")
    inbox.forgetNordicDFUCentral(Self.first)
    #expect(inbox.events.last == .nordicDFUCentralGone(.legacy, central: Self.first.rawValue))
    #expect(!inbox.nordicDFUNotifying.contains(.legacy))
    inbox.forgetNordicDFUCentral(Self.first)
    #expect(inbox.events.count == 2, "a central that already went is not gone twice")
  }
}
