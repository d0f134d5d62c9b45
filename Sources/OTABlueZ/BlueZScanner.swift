import OTADBus
import OTALink
import OTASystem

/// A device seen advertising the OTA service.
public struct ScannedDevice: Equatable, Sendable {
  public var address: String
  public var name: String?
  public var rssi: Int16?
}

/// `otactl scan`: discovery filtered by the OTA service UUID for a while, and what answered.
public enum BlueZScanner {
  public static func scan(connection: DBusConnection, adapter: String, duration: Duration) throws(DBusError)
    -> [ScannedDevice]
  {
    let adapterPath = BlueZ.adapterPath(adapter)
    try BlueZ.watchDevices(on: connection)
    _ = try connection.call(
      destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, method: "SetDiscoveryFilter",
      arguments: [.vardict(["UUIDs": .strings([OTAUUID.service]), "Transport": .string("le")])])
    _ = try connection.call(
      destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, method: "StartDiscovery")
    defer {
      _ = try? connection.call(
        destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, method: "StopDiscovery")
    }
    let clock = ContinuousClock()
    let end = clock.now + duration
    while clock.now < end {
      _ = try? Poller.wait(
        for: [connection.descriptor], timeout: min(end - clock.now, connection.pollTimeout ?? .seconds(1)))
      _ = connection.process()
    }
    // What BlueZ now knows, with RSSI (seen in this discovery), offering the OTA service.
    let reply = try connection.call(
      destination: BlueZ.service, path: .root, interface: DBusStandardInterface.objectManager,
      method: "GetManagedObjects")
    var devices: [ScannedDevice] = []
    for entry in reply.first?.dictionaryEntries ?? [] {
      guard let path = entry.key.objectPathValue, path.isDescendant(of: adapterPath) else { continue }
      for interface in entry.value.dictionaryEntries ?? [] where interface.key.stringValue == BlueZ.device {
        guard let properties = try? interface.value.vardict(),
          properties["UUIDs"]?.stringArray?.contains(OTAUUID.service) == true, properties["RSSI"] != nil,
          let address = properties["Address"]?.stringValue
        else { continue }
        devices.append(
          ScannedDevice(
            address: address, name: properties["Name"]?.stringValue, rssi: properties["RSSI"]?.int16Value))
      }
    }
    return devices.sorted { ($0.rssi ?? -127) > ($1.rssi ?? -127) }
  }
}
