import DBusTestSupport
import OTADBus
import OTALink
import Testing

@testable import OTABlueZ

/// The SMP service in otad's GATT application, against the fake bluetoothd of
/// `BlueZPeripheralTests`: what BlueZ reads, the writes it passes on per central, the notifications
/// it is asked to send, and the advertisement.
@Suite(.enabled(if: PrivateBus.isAvailable)) struct BlueZPeripheralSMPTests {
  let bluez: BlueZPeripheralTests
  static let phone: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"

  init() throws { bluez = try BlueZPeripheralTests(smp: true) }

  var app: GattApplication { bluez.app }

  /// Every object's interfaces and their properties, as BlueZ reads them.
  func managedObjects() throws -> [DBusObjectPath: [String: [String: DBusValue]]] {
    let reply = try bluez.call("/org/blueota", DBusStandardInterface.objectManager, "GetManagedObjects")
    var objects: [DBusObjectPath: [String: [String: DBusValue]]] = [:]
    for entry in reply.first?.dictionaryEntries ?? [] {
      let path = try #require(entry.key.objectPathValue)
      for interface in entry.value.dictionaryEntries ?? [] {
        objects[path, default: [:]][try #require(interface.key.stringValue)] = try interface.value.vardict()
      }
    }
    return objects
  }

  @Test func theSMPServiceAndItsOneCharacteristicAreWhatMCUmgrClientsLookFor() throws {
    // [S-BLE-1] [S-BLE-7]
    let objects = try managedObjects()
    let service = try #require(objects[app.smpService]?[BlueZ.gattService])
    #expect(service["UUID"]?.stringValue == "8d53dc1d-1db7-4cd3-868b-8a527460aa84")
    #expect(service["Primary"]?.boolValue == true)
    let characteristic = try #require(objects[app.smpCharacteristic]?[BlueZ.gattCharacteristic])
    #expect(characteristic["UUID"]?.stringValue == "da2e7828-fbce-4e01-ae9e-261174997c48")
    #expect(characteristic["Service"]?.objectPathValue == app.smpService)
    #expect(characteristic["Flags"]?.stringArray == ["write-without-response", "write", "notify"])
    #expect(characteristic["WriteAcquired"] == nil, "SMP stays on WriteValue: BlueZ names the central there")
    // The OTA service is still there, unchanged.
    #expect(objects[app.otaService]?[BlueZ.gattService]?["UUID"]?.stringValue == OTAUUID.service)
  }

  @Test func withoutSMPTheApplicationHasNoSMPService() throws {
    // [S-BLE-2]
    let plain = try BlueZPeripheralTests(smp: false)
    let reply = try plain.call("/org/blueota", DBusStandardInterface.objectManager, "GetManagedObjects")
    let paths = (reply.first?.dictionaryEntries ?? []).compactMap { $0.key.objectPathValue }
    #expect(!paths.isEmpty)
    #expect(!paths.contains(plain.app.smpService) && !paths.contains(plain.app.smpCharacteristic))
  }

  /// BlueZ 5.66 has no scan response properties (ScanResponseServiceUUIDs came later, experimental),
  /// and two 128-bit UUIDs with the flags do not fit 31 bytes: the advertisement keeps the OTA
  /// service's UUID, which otactl scans for (docs/SMP.md).
  @Test func theAdvertisementNamesTheOTAServiceAndTheName() throws {
    // [S-BLE-9]
    let advertisement = try #require(try managedObjects()[app.advertisement]?[BlueZ.advertisement])
    #expect(advertisement["ServiceUUIDs"]?.stringArray == [OTAUUID.service])
    #expect(advertisement["LocalName"]?.stringValue == "Test")
    #expect(advertisement["Type"]?.stringValue == "peripheral")
    #expect(advertisement.keys.allSatisfy { !$0.hasPrefix("ScanResponse") })
  }

  @Test func writesArePassedOnWithTheirCentralAndMTUAndAreNoOTAConnection() throws {
    _ = try bluez.call(
      app.smpCharacteristic, BlueZ.gattCharacteristic, "WriteValue",
      [.bytes([0x02, 0, 0, 3]), .vardict(["device": .objectPath(Self.phone), "mtu": .uint16(23)])])
    _ = try bluez.call(
      app.smpCharacteristic, BlueZ.gattCharacteristic, "WriteValue",
      [.bytes([0, 0, 1, 0]), .vardict(["device": .objectPath(Self.phone), "type": .string("command")])])
    #expect(
      bluez.events == [
        .smpWrite(central: Self.phone.rawValue, mtu: 23, bytes: [0x02, 0, 0, 3]),
        .smpWrite(central: Self.phone.rawValue, mtu: 23, bytes: [0, 0, 1, 0]),
      ], "no .connected: an SMP central is not the OTA central; its MTU is remembered")
    bluez.events.removeAll()
    try bluez.bluez.emitPropertiesChanged(
      path: Self.phone, interface: BlueZ.device, changed: ["Connected": .boolean(false)])
    try bluez.pump { !self.bluez.events.isEmpty }
    #expect(bluez.events == [.smpCentralGone(central: Self.phone.rawValue)], "and no OTA .disconnected")
  }

  @Test func notificationsGoOutOnTheSMPCharacteristicOnlyOnceSubscribedEvenWhenRepeated() throws {
    // [S-BLE-6]
    bluez.peripheral.notifySMP([1, 2, 3])
    _ = try bluez.call(app.smpCharacteristic, BlueZ.gattCharacteristic, "StartNotify")
    for piece: [UInt8] in [[0x03, 0, 0, 2], [0x03, 0, 0, 2], [0xA0]] { bluez.peripheral.notifySMP(piece) }
    try bluez.pump { self.bluez.signals.filter { $0.path == self.app.smpCharacteristic }.count >= 3 }
    let values = try bluez.signals.filter { $0.path == app.smpCharacteristic }.map {
      try $0.arguments[1].vardict()["Value"]?.byteArray
    }
    #expect(
      values == [[0x03, 0, 0, 2], [0x03, 0, 0, 2], [0xA0]], "nothing before StartNotify; repeats go out")
    #expect(!bluez.signals.contains { $0.path == app.controlPoint })
  }
}

/// `--require-pairing` holds for SMP as for the OTA service: only a bonded central writes.
@Suite struct GattApplicationSMPPairingTests {
  func flags(requireEncryption: Bool) -> [String]? {
    let app = GattApplication(
      root: "/org/blueota", requireEncryption: requireEncryption, localName: "T", smp: true)
    return app.objects(PeripheralInbox()).first { $0.path == app.smpCharacteristic }?.interfaces
      .first { $0.name == BlueZ.gattCharacteristic }?.properties.first { $0.name == "Flags" }?.value
      .stringArray
  }

  @Test func theSMPCharacteristicNeedsABondedLinkWhenPairingIsRequired() {
    // [S-BLE-3] [SEC-CHECK-1]
    #expect(
      flags(requireEncryption: true) == ["write-without-response", "encrypt-authenticated-write", "notify"])
    #expect(flags(requireEncryption: false) == ["write-without-response", "write", "notify"])
  }
}
