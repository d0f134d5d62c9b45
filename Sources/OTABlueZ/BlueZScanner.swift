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
    // Discoveries of `BlueZ.discoveryRound` one after the other, what each saw kept: a device
    // whose one report the kernel dropped at the start of a discovery is seen in the next.
    let clock = ContinuousClock()
    let end = clock.now + duration
    var seen: [String: ScannedDevice] = [:]
    repeat {
      _ = try connection.call(
        destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, method: "StartDiscovery")
      let roundEnd = min(end, clock.now + BlueZ.discoveryRound)
      while clock.now < roundEnd {
        _ = try? Poller.wait(
          for: [connection.descriptor],
          timeout: min(roundEnd - clock.now, connection.pollTimeout ?? .seconds(1)))
        _ = connection.process()
      }
      // Before the stop: BlueZ forgets the RSSI it heard when the discovery ends.
      let found = try answering(connection: connection, adapterPath: adapterPath)
      _ = try? connection.call(
        destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, method: "StopDiscovery")
      for device in found { seen[device.address] = device }
    } while clock.now < end
    return seen.values.sorted { ($0.rssi ?? -127, $1.address) > ($1.rssi ?? -127, $0.address) }
  }

  /// What BlueZ now knows, with RSSI (heard in this discovery), offering the OTA service.
  static func answering(connection: DBusConnection, adapterPath: DBusObjectPath) throws(DBusError)
    -> [ScannedDevice]
  {
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
    return devices
  }
}
