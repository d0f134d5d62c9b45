import Foundation
import OTADBus
import OTASystem
import OTATestSupport
import Testing

@testable import OTABlueZ

/// docs/PROTOCOL.md's GATT layout as the doc prints it, against the tree otad registers with
/// BlueZ: the UUIDs (parsed out of the doc's text, so a typo there fails here), the flags, and
/// what pairing changes for the writes and for the L2CAP channel's socket. No bus needed.
@Suite struct GattContractTests {
  static let protocolDoc = RepositoryRoot.url
    .appendingPathComponent("docs/PROTOCOL.md")

  /// The UUID the doc gives a name: the GATT table's row that starts with it, or for the Device
  /// Information Service the backticked UUID right after the name in the text below the table.
  static func documentedUUID(_ name: String) throws -> String {
    // Markdown wraps lines anywhere: a name may be cut across two.
    let text = try String(contentsOf: protocolDoc, encoding: .utf8).replacingOccurrences(of: "\n", with: " ")
    let row = "| \(name) | `"
    let start = try #require(text.range(of: row) ?? text.range(of: "\(name) (`"), "the doc names \(name)")
    let rest = text[start.upperBound...]
    return String(try #require(rest.split(separator: "`", maxSplits: 1).first))
  }

  /// The registered tree's characteristics and services: UUID to flags (services: no flags).
  static func tree(requireEncryption: Bool) -> [String: [String]] {
    let app = GattApplication(root: "/org/blueota", requireEncryption: requireEncryption, localName: "T")
    var found: [String: [String]] = [:]
    for object in app.objects(PeripheralInbox()) {
      for interface in object.interfaces {
        let properties = Dictionary(uniqueKeysWithValues: interface.properties.map { ($0.name, $0.value) })
        guard let uuid = properties["UUID"]?.stringValue else { continue }
        found[uuid] = properties["Flags"]?.stringArray ?? []
      }
    }
    return found
  }

  @Test func theUUIDsAreTheOnesTheDocPrints() throws {
    // [P-GATT-1] [P-GATT-2] [P-GATT-3] [P-GATT-4] [P-GATT-5] [P-GATT-6] [P-GATT-7]
    // [P-GATT-10] [P-GATT-11] [P-GATT-12]
    let named: [(String, String)] = [
      ("OTA service", OTAUUID.service), ("Control Point", OTAUUID.controlPoint), ("Data", OTAUUID.data),
      ("Info", OTAUUID.info), ("L2CAP PSM", OTAUUID.l2capPSM),
      ("Running-slot block hashes", OTAUUID.blockHashes),
      ("Device Information Service", OTAUUID.deviceInformation),
      ("Firmware Revision String", OTAUUID.firmwareRevision),
      ("Model Number String", OTAUUID.modelNumber), ("Serial Number String", OTAUUID.serialNumber),
      ("Hardware Revision String", OTAUUID.hardwareRevision),
    ]
    for (name, uuid) in named {
      #expect(try Self.documentedUUID(name) == uuid, "\(name)")
    }
    // And the tree registers exactly those: nothing undocumented, nothing missing.
    #expect(Set(Self.tree(requireEncryption: false).keys) == Set(named.map(\.1)))
  }

  @Test func theFlagsAreTheDocsAndPairingMakesTheWritesAuthenticated() {
    // [P-GATT-2] [P-GATT-3] [P-GATT-4] [P-GATT-5] [P-GATT-6] [P-GATT-9] [P-GATT-10] [P-GATT-11] [P-GATT-12]
    // [SEC-CHECK-1] [SEC-CHECK-6] [SEC-PAIR-1]
    let open = Self.tree(requireEncryption: false)
    #expect(open[OTAUUID.controlPoint] == ["write", "notify"])
    #expect(open[OTAUUID.data] == ["write-without-response", "write"])
    let paired = Self.tree(requireEncryption: true)
    #expect(paired[OTAUUID.controlPoint] == ["encrypt-authenticated-write", "notify"])
    #expect(paired[OTAUUID.data] == ["write-without-response", "encrypt-authenticated-write"])
    // "Reads stay open."
    for uuid in [
      OTAUUID.info, OTAUUID.l2capPSM, OTAUUID.blockHashes, OTAUUID.firmwareRevision, OTAUUID.modelNumber,
      OTAUUID.serialNumber, OTAUUID.hardwareRevision,
    ] {
      #expect(open[uuid] == ["read"] && paired[uuid] == ["read"], "\(uuid)")
    }
  }

  @Test func pairingMakesTheChannelsListenerAskForHighSecurity() throws {
    // [P-CHAN-4] [SEC-PAIR-2]
    let paired = try #require(
      BlueZPeripheral.channelOptions(.init(requireEncryption: true, l2capPSM: 0x85)))
    #expect(paired.psm == 0x85 && paired.security == .high)
    let open = try #require(BlueZPeripheral.channelOptions(.init(l2capPSM: 0)))
    #expect(open.psm == 0 && open.security == nil)
    #expect(BlueZPeripheral.channelOptions(.init(requireEncryption: true)) == nil, "no PSM: no channel")
  }
}
