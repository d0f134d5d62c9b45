import Logging
import OTADBus
import OTALink
import OTAWire

/// The way to ready: discovery, Connect, services, characteristics, notifications, the data socket.
extension BlueZCentralMachine {
  // MARK: Connecting

  mutating func connect() {
    reset()
    startTimer(.connectDeadline, after: .seconds(20))
    startDiscovery()
  }

  mutating func startDiscovery() {
    phase = .discovering
    start(
      .setDiscoveryFilter,
      BlueZRequest(
        path: adapterPath, interface: BlueZ.adapter, method: "SetDiscoveryFilter",
        arguments: [
          .vardict([
            "UUIDs": .strings([OTAUUID.service]), "Transport": .string("le"), "DuplicateData": .boolean(true),
          ])
        ], timeout: .seconds(5)))
  }

  /// Devices BlueZ listed: a matching one is connected to directly (BlueZ connects when it next
  /// hears it advertise; after a restart its properties need not change, so no signal would say it
  /// is back). One whose direct connect failed is forgotten, to be discovered anew.
  mutating func listedDevices(_ values: [DBusValue]) {
    let listed = Self.objects(in: values, interface: BlueZ.device)
    for (path, properties) in listed { devices[path] = properties }
    for (path, properties) in listed.sorted(by: { $0.key < $1.key })
    where phase == .discovering && path.isDescendant(of: adapterPath)
      && configuration.selector.matches(properties)
    {
      if staleDevices.remove(path) != nil {
        out.append(.log(.debug, "forgetting \(path): its last connect failed"))
        devices[path] = nil
        out.append(
          .send(
            BlueZRequest(
              path: adapterPath, interface: BlueZ.adapter, method: "RemoveDevice",
              arguments: [.objectPath(path)],
              timeout: .seconds(5))))
      } else {
        consider(path, properties)
      }
    }
  }

  mutating func consider(_ path: DBusObjectPath, _ properties: [String: DBusValue]) {
    guard phase == .discovering, path.isDescendant(of: adapterPath),
      configuration.selector.matches(properties)
    else { return }
    out.append(.log(.debug, "found \(path) (rssi \(properties["RSSI"]?.int16Value.map { "\($0)" } ?? "?"))"))
    stopTimer(.freshDiscovery)
    stopDiscovery()
    device = path
    phase = .connecting
    start(.connect(path), BlueZRequest(path: path, interface: BlueZ.device, method: "Connect"))
  }

  mutating func stopDiscovery() {
    out.append(.send(BlueZRequest(path: adapterPath, interface: BlueZ.adapter, method: "StopDiscovery")))
  }

  mutating func listCharacteristics() {
    phase = .listing([:], dataMTU: nil)
    start(
      .listCharacteristics,
      BlueZRequest(
        path: .root, interface: DBusStandardInterface.objectManager, method: "GetManagedObjects",
        timeout: .seconds(5)))
  }

  /// Characteristics under the device, from GetManagedObjects or InterfacesAdded: once all three
  /// OTA ones are known, asks for notifications.
  mutating func found(characteristics: [DBusObjectPath: [String: DBusValue]]) {
    guard case .listing(var known, var dataMTU) = phase, let device else { return }
    for (path, properties) in characteristics where path.isDescendant(of: device) {
      guard let uuid = properties["UUID"]?.stringValue else { continue }
      known[uuid] = path
      if uuid == OTAUUID.data, let mtu = properties["MTU"]?.uint16Value { dataMTU = Int(mtu) }
    }
    guard let control = known[OTAUUID.controlPoint], let data = known[OTAUUID.data],
      let info = known[OTAUUID.info]
    else {
      phase = .listing(known, dataMTU: dataMTU)
      return
    }
    stopTimer(.characteristicsLate)
    let found = Characteristics(
      control: control, data: data, info: info, blockHashes: known[OTAUUID.blockHashes],
      identity: OTAUUID.identity.compactMapValues { known[$0] }, mtu: dataMTU)
    phase = .preparing(found, acquiredMTU: nil)
    start(
      .startNotify, BlueZRequest(path: control, interface: BlueZ.gattCharacteristic, method: "StartNotify"))
  }

  mutating func becomeReady(_ characteristics: Characteristics, mtu: Int, transport: Transport) {
    // BlueZ 5.66's server side acquires its own socket on the first write command and loses that
    // write: prime it with one byte, which the device drops as a malformed chunk and counts.
    phase = .ready(Ready(characteristics: characteristics, mtu: mtu, transport: transport, dataQueue: [[0]]))
    stopTimer(.connectDeadline)
    flushData()
    out.append(.emit(.connected(mtu: ATTMTU(clamping: mtu))))
  }

  mutating func dataSocketAdopted() {
    guard case .preparing(let characteristics, let mtu?) = phase else { return }
    out.append(.log(.debug, "data socket acquired (mtu \(mtu))"))
    becomeReady(characteristics, mtu: mtu, transport: .socket)
  }
}
