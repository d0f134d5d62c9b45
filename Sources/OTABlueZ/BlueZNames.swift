import OTADBus
import OTALink

/// Names and UUIDs the BlueZ roles use: BlueZ's interfaces and the OTA service of docs/PROTOCOL.md.
public enum BlueZ {
  public static let service = "org.bluez"
  public static let adapter = "org.bluez.Adapter1"
  public static let device = "org.bluez.Device1"
  public static let gattManager = "org.bluez.GattManager1"
  public static let gattService = "org.bluez.GattService1"
  public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
  public static let advertisingManager = "org.bluez.LEAdvertisingManager1"
  public static let advertisement = "org.bluez.LEAdvertisement1"

  /// How long one discovery runs before a central that found nothing starts a fresh one. Linux
  /// (6.1) drops the advertising reports that arrive between the controller's scan enable and
  /// the moment the kernel marks its discovery as finding, and a controller filtering duplicates
  /// reports each advertiser once per scan: when that one report is the dropped one, the device
  /// stays unseen for the whole discovery (docs/BLUEZ.md). Every fresh discovery is a new scan
  /// enable, and a new chance.
  public static let discoveryRound: Duration = .seconds(1)

  /// Subscribes to what a central watches: devices appearing and their properties changing.
  public static func watchDevices(on connection: DBusConnection) throws(DBusError) {
    try connection.addMatch(
      .signals(sender: service, interface: DBusStandardInterface.properties, member: "PropertiesChanged"))
    try connection.addMatch(
      .signals(sender: service, interface: DBusStandardInterface.objectManager, member: "InterfacesAdded"))
    // bluetoothd going away and coming back: its objects (and a link) die with it, unsignalled.
    try connection.addMatch(
      .signals(
        sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
        arg0: service))
  }

  public static func adapterPath(_ name: String) -> DBusObjectPath { DBusObjectPath("/org/bluez/\(name)") }

  /// `AA:BB:CC:DD:EE:FF` under an adapter: `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
  public static func devicePath(adapter: String, address: String) -> DBusObjectPath {
    adapterPath(adapter).appending("dev_" + address.uppercased().replacingOccurrences(of: ":", with: "_"))
  }
}

/// The OTA service's UUIDs (docs/PROTOCOL.md) and the Device Information Service's.
public enum OTAUUID {
  public static let service = "d3df0001-cb6f-4f89-ab54-b800f5482b5b"
  public static let controlPoint = "d3df0002-cb6f-4f89-ab54-b800f5482b5b"
  public static let data = "d3df0003-cb6f-4f89-ab54-b800f5482b5b"
  public static let info = "d3df0004-cb6f-4f89-ab54-b800f5482b5b"
  /// The PSM of the LE L2CAP data channel (u16 LE, 0: none).
  public static let l2capPSM = "d3df0005-cb6f-4f89-ab54-b800f5482b5b"
  /// The running slot's block hashes.
  public static let blockHashes = "d3df0006-cb6f-4f89-ab54-b800f5482b5b"
  public static let deviceInformation = "0000180a-0000-1000-8000-00805f9b34fb"
  public static let firmwareRevision = "00002a26-0000-1000-8000-00805f9b34fb"
  public static let modelNumber = "00002a24-0000-1000-8000-00805f9b34fb"
  public static let serialNumber = "00002a25-0000-1000-8000-00805f9b34fb"
  public static let hardwareRevision = "00002a27-0000-1000-8000-00805f9b34fb"

  /// The Device Information Service's identity strings, by the characteristic each is.
  public static let identity: [Characteristic: String] = [
    .modelNumber: modelNumber, .serialNumber: serialNumber, .hardwareRevision: hardwareRevision,
  ]
}

/// The SMP (MCUmgr) service over Bluetooth and its one characteristic, as MCUmgr clients know them.
public enum SMPUUID {
  public static let service = "8d53dc1d-1db7-4cd3-868b-8a527460aa84"
  public static let characteristic = "da2e7828-fbce-4e01-ae9e-261174997c48"
}

/// Nordic's Legacy DFU service (nRF5 SDK up to 11; docs/NORDIC-DFU.md), as Nordic's bootloader and
/// its clients (nrf-ota, Nordic's DFU libraries) name it.
public enum LegacyDFUUUID {
  public static let service = "00001530-1212-efde-1523-785feabcd123"
  public static let controlPoint = "00001531-1212-efde-1523-785feabcd123"
  public static let packet = "00001532-1212-efde-1523-785feabcd123"
  public static let version = "00001534-1212-efde-1523-785feabcd123"
  /// The DFU Version characteristic: 0x0008, SDK 11's bootloader ("in DFU mode", so a client goes
  /// straight to the update: otad's DFU service is always ready).
  public static let versionValue: [UInt8] = [0x08, 0x00]
}

/// Nordic's Secure DFU service (nRF5 SDK 12 and later; docs/NORDIC-DFU.md): the 16-bit 0xFE59
/// Nordic registered, its control point and packet characteristic, as nrfutil and Nordic's DFU
/// libraries name them.
public enum SecureDFUUUID {
  public static let service = "0000fe59-0000-1000-8000-00805f9b34fb"
  public static let controlPoint = "8ec90001-f315-4f60-9fb8-838830daea50"
  public static let packet = "8ec90002-f315-4f60-9fb8-838830daea50"
}

extension String {
  fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
    split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
  }
}
