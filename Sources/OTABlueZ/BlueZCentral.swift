import Logging
import OTADBus
import OTALink
import OTASystem

/// The central role on BlueZ: finds the device (discovery filtered by the OTA service UUID),
/// connects, waits for its services, then streams chunks through AcquireWrite, writes commands with
/// WriteValue (one at a time) and takes responses as notifications. A drop of the link, or of the
/// device, is reported as `.disconnected`; the next `connect` scans again, so a device whose address
/// changed across its restart is found by its service.
public final class BlueZCentral: CentralLink {
  enum Stage: Equatable {
    case idle
    case discovering
    case connecting
    case resolving
    case preparing
    case ready
  }

  let connection: DBusConnection
  let adapter: String
  let selector: DeviceSelector
  let queueDepth: Int
  let logger: Logger
  private var stage = Stage.idle
  private var lastNow: Duration = .zero
  private var connectDeadline: Duration?
  private var pending: [DBusSerial: String] = [:]
  private var device: DBusObjectPath?
  private var characteristics: [String: DBusObjectPath] = [:]
  private var dataSocket: FileDescriptor?
  private var mtu = 23
  private var dataQueue: [[UInt8]] = []
  private var controlQueue: [[UInt8]] = []
  private var controlInFlight: DBusSerial?
  private var events: [CentralEvent] = []
  /// The sender wrote data since the last `service`: it may have more once it gets credit again.
  private var streaming = false
  /// Known devices whose direct connect failed: forgotten (RemoveDevice) at the next attempt, so
  /// that a device that came back under another address is discovered afresh.
  private var staleDevices: Set<DBusObjectPath> = []
  /// When to start connecting over, after a set-up step met a link still going down.
  private var retryConnectAt: Duration?
  /// Figures for reports: when the last connect started and when it was ready.
  public private(set) var connectStartedAt: Duration?
  public private(set) var readyAt: Duration?
  /// Devices seen while scanning: path to (address, name, RSSI).
  public private(set) var seen: [DBusObjectPath: (address: String, name: String?, rssi: Int16?)] = [:]

  public init(
    connection: DBusConnection, adapter: String = "hci0", selector: DeviceSelector, queueDepth: Int = 16,
    logger: Logger
  ) throws(DBusError) {
    self.connection = connection
    self.adapter = adapter
    self.selector = selector
    self.queueDepth = queueDepth
    self.logger = logger
    try BlueZ.watchDevices(on: connection)
  }

  public var descriptors: [Int32] { [connection.descriptor] }

  public var nextDeadline: Duration? {
    var deadlines = [connection.pollTimeout.map { lastNow + $0 }, connectDeadline, retryConnectAt]
    if !events.isEmpty || streaming { deadlines.append(lastNow) }
    // Data waits for room in bluetoothd's socket: look again shortly.
    if !dataQueue.isEmpty, dataSocket != nil { deadlines.append(lastNow + .milliseconds(2)) }
    return deadlines.compactMap { $0 }.min()
  }

  // MARK: Connecting

  public func connect(now: Duration) {
    lastNow = now
    reset()
    connectStartedAt = now
    readyAt = nil
    connectDeadline = now + .seconds(20)
    retryConnectAt = nil
    startDiscovery()
  }

  private func startDiscovery() {
    stage = .discovering
    let adapterPath = BlueZ.adapterPath(adapter)
    do {
      _ = try connection.call(
        destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, method: "SetDiscoveryFilter",
        arguments: [
          .vardict([
            "UUIDs": .strings([OTAUUID.service]), "Transport": .string("le"), "DuplicateData": .boolean(true),
          ])
        ],
        timeout: .seconds(5))
      _ = try connection.call(
        destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, method: "StartDiscovery",
        timeout: .seconds(5))
    } catch  where error.name == "org.bluez.Error.InProgress" {
      // Already discovering: fine.
    } catch {
      fail("could not start discovery on \(adapter): \(error.message)")
      return
    }
    // A matching device BlueZ already knows is connected to directly: BlueZ connects when it next
    // hears it advertise (after a restart its properties need not change, so no signal would say
    // it is back). One whose direct connect failed is forgotten, to be discovered anew.
    guard let objects = try? managedObjects() else { return }
    for (path, properties) in objects.sorted(by: { $0.key < $1.key })
    where stage == .discovering && path.isDescendant(of: adapterPath) && selector.matches(properties) {
      if staleDevices.remove(path) != nil {
        logger.debug("forgetting \(path): its last connect failed")
        _ = try? connection.call(
          destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, method: "RemoveDevice",
          arguments: [.objectPath(path)], timeout: .seconds(5))
      } else {
        consider(path, properties)
      }
    }
  }

  private func consider(_ path: DBusObjectPath, _ properties: [String: DBusValue]) {
    if let address = properties["Address"]?.stringValue {
      let known = seen[path]
      seen[path] = (
        address, properties["Name"]?.stringValue ?? known?.name, properties["RSSI"]?.int16Value ?? known?.rssi
      )
    }
    guard stage == .discovering, path.isDescendant(of: BlueZ.adapterPath(adapter)),
      selector.matches(properties)
    else { return }
    logger.debug(
      "found \(path)", metadata: ["rssi": "\(properties["RSSI"]?.int16Value.map { "\($0)" } ?? "?")"])
    stopDiscovery()
    device = path
    stage = .connecting
    start("Connect", path: path, interface: BlueZ.device)
  }

  private func stopDiscovery() {
    _ = try? connection.startCall(
      destination: BlueZ.service, path: BlueZ.adapterPath(adapter), interface: BlueZ.adapter,
      method: "StopDiscovery")
  }

  /// Finds the OTA characteristics under the device, then asks for notifications and the data socket.
  private func resolveCharacteristics() {
    guard let device, let objects = try? managedObjects() else { return }
    characteristics = [:]
    for (path, properties) in objects where path.isDescendant(of: device) {
      if let uuid = properties["UUID"]?.stringValue, properties["Flags"] != nil {
        characteristics[uuid] = path
      }
    }
    guard let control = characteristics[OTAUUID.controlPoint], characteristics[OTAUUID.data] != nil,
      characteristics[OTAUUID.info] != nil
    else {
      fail("the device does not offer the OTA characteristics")
      return
    }
    stage = .preparing
    start("StartNotify", path: control, interface: BlueZ.gattCharacteristic)
  }

  private func acquireWrite() {
    guard let data = characteristics[OTAUUID.data] else { return }
    start("AcquireWrite", path: data, interface: BlueZ.gattCharacteristic, arguments: [.vardict([:])])
  }

  // MARK: The loop

  public func service(readable: Set<Int32>, now: Duration) -> [CentralEvent] {
    lastNow = now
    streaming = false
    for event in connection.process() { handle(event) }
    if let retry = retryConnectAt, now >= retry {
      retryConnectAt = nil
      startDiscovery()
    }
    if let deadline = connectDeadline, now >= deadline, stage != .ready {
      if stage == .discovering { stopDiscovery() }
      fail(stage == .discovering ? "no device matching \(selector) was found" : "connecting timed out")
    }
    flushData()
    if stage == .ready {
      events.append(.writable(queueDepth - dataQueue.count))
    }
    defer { events.removeAll() }
    return events
  }

  private func handle(_ event: DBusEvent) {
    switch event {
    case .reply(let serial, let result):
      guard let what = pending.removeValue(forKey: serial) else { return }
      handleReply(what, serial: serial, result)
    case .signal(let signal):
      handle(signal)
    case .disconnected:
      lose("the system bus connection was lost")
    }
  }

  private func handleReply(_ what: String, serial: DBusSerial, _ result: Result<[DBusValue], DBusError>) {
    switch (what, result) {
    case ("Connect", .success):
      stage = .resolving
      if let device, (try? deviceProperties(device))?["ServicesResolved"]?.boolValue == true {
        resolveCharacteristics()
      }
    case ("StartNotify", .success):
      acquireWrite()
    case ("AcquireWrite", .success(let values)):
      guard values.count == 2, let descriptor = values[0].fileDescriptor, let mtu = values[1].uint16Value,
        let owned = try? descriptor.duplicate()
      else {
        fail("AcquireWrite gave no socket")
        return
      }
      try? owned.makeNonBlocking()
      dataSocket = owned
      self.mtu = Int(mtu)
      logger.debug("data socket acquired", metadata: ["mtu": "\(mtu)"])
      // BlueZ 5.66's server side acquires its own socket on the first write command and loses that
      // write: prime it with one byte, which the device drops as a malformed chunk and counts.
      _ = [UInt8(0)].withUnsafeBytes { try? owned.send($0) }
      stage = .ready
      readyAt = lastNow
      connectDeadline = nil
      events.append(.connected(mtu: self.mtu))
    case ("WriteValue", let result):
      if serial == controlInFlight { controlInFlight = nil }
      if case .failure(let error) = result {
        logger.warning("control-point write failed: \(error.name): \(error.message)")
        events.append(.controlWriteFailed(0xFF))
      }
      sendNextControl()
    case ("ReadValue", .success(let values)):
      events.append(.info(values.first?.byteArray ?? []))
    case ("ReadValue", .failure(let error)):
      lose("reading Info failed: \(error.message)")
    case ("Connect", .failure(let error)):
      if let device { staleDevices.insert(device) }
      fail("connecting failed: \(error.message)")
    case (_, .failure(let error))
    where stage != .ready
      && (error.name.hasSuffix("NotConnected") || error.message.lowercased() == "not connected"):
      // The link was still going down (a previous central's Disconnect): start over shortly, until
      // the connect deadline.
      logger.debug("\(what) met a link going down: connecting again shortly")
      let deadline = connectDeadline
      reset()
      connectDeadline = deadline
      retryConnectAt = lastNow + .milliseconds(500)
    case (_, .failure(let error)):
      if stage == .ready {
        logger.warning("\(what) failed: \(error.name): \(error.message)")
      } else {
        fail("\(what) failed: \(error.message)")
      }
    default:
      break
    }
  }

  private func handle(_ signal: DBusSignal) {
    if signal.member == "InterfacesAdded", signal.arguments.count == 2,
      let path = signal.arguments[0].objectPathValue,
      let interfaces = signal.arguments[1].dictionaryEntries
    {
      for entry in interfaces where entry.key.stringValue == BlueZ.device {
        if let properties = try? entry.value.vardict() { consider(path, properties) }
      }
      return
    }
    guard signal.member == "PropertiesChanged", signal.arguments.count >= 2,
      let interface = signal.arguments[0].stringValue, let changed = try? signal.arguments[1].vardict()
    else { return }
    if interface == BlueZ.device {
      if stage == .discovering, changed["RSSI"] != nil, let properties = try? deviceProperties(signal.path) {
        consider(signal.path, properties)
      }
      guard signal.path == device else { return }
      if changed["Connected"]?.boolValue == false, stage != .idle {
        if stage == .ready {
          lose("the device disconnected")
        } else {
          // A link going down while we set up (a previous central's Disconnect): start over shortly.
          let deadline = connectDeadline
          reset()
          connectDeadline = deadline
          retryConnectAt = lastNow + .milliseconds(500)
        }
      } else if changed["ServicesResolved"]?.boolValue == true, stage == .resolving {
        resolveCharacteristics()
      }
    } else if interface == BlueZ.gattCharacteristic, signal.path == characteristics[OTAUUID.controlPoint],
      let value = changed["Value"]?.byteArray, stage == .ready
    {
      events.append(.notification(value))
    }
  }

  // MARK: Writing and reading

  public func writeControl(_ bytes: [UInt8]) {
    guard stage == .ready else { return }
    controlQueue.append(bytes)
    sendNextControl()
  }

  private func sendNextControl() {
    guard controlInFlight == nil, !controlQueue.isEmpty, let control = characteristics[OTAUUID.controlPoint]
    else {
      return
    }
    let bytes = controlQueue.removeFirst()
    controlInFlight = start(
      "WriteValue", path: control, interface: BlueZ.gattCharacteristic,
      arguments: [.bytes(bytes), .vardict(["type": .string("request")])])
  }

  public func writeData(_ bytes: [UInt8]) {
    guard stage == .ready else { return }
    dataQueue.append(bytes)
    streaming = true
    flushData()
  }

  /// Moves queued chunks into bluetoothd's socket until it is full; each write is one ATT write.
  private func flushData() {
    guard let socket = dataSocket else { return }
    while let packet = dataQueue.first {
      // nil: the socket is full (EAGAIN, ENOBUFS); a failure: it closed.
      let written = packet.withUnsafeBytes { bytes in
        Result { () throws(SystemError) in try socket.send(bytes) }
      }
      if case .success(packet.count) = written {
        dataQueue.removeFirst()
      } else if case .success(nil) = written {
        logger.trace("data socket full", metadata: ["queued": "\(dataQueue.count)"])
        return
      } else {
        lose("the data socket closed")
        return
      }
    }
  }

  public func readInfo() {
    guard stage == .ready, let info = characteristics[OTAUUID.info] else { return }
    start("ReadValue", path: info, interface: BlueZ.gattCharacteristic, arguments: [.vardict([:])])
  }

  public func disconnect() {
    let wasActive = stage != .idle
    if let device, stage != .discovering {
      start("Disconnect", path: device, interface: BlueZ.device)
      connection.flush()
    } else if stage == .discovering {
      stopDiscovery()
    }
    reset()
    if wasActive { events.append(.disconnected("the central disconnected")) }
  }

  // MARK: Helpers

  @discardableResult
  private func start(
    _ method: String, path: DBusObjectPath, interface: String, arguments: [DBusValue] = []
  ) -> DBusSerial? {
    do {
      let serial = try connection.startCall(
        destination: BlueZ.service, path: path, interface: interface, method: method, arguments: arguments,
        timeout: .seconds(20))
      pending[serial] = method
      return serial
    } catch {
      if stage == .ready {
        lose("\(method) could not be sent: \(error.message)")
      } else {
        fail("\(method): \(error.message)")
      }
      return nil
    }
  }

  private func managedObjects() throws(DBusError) -> [DBusObjectPath: [String: DBusValue]] {
    let reply = try connection.call(
      destination: BlueZ.service, path: .root, interface: DBusStandardInterface.objectManager,
      method: "GetManagedObjects", timeout: .seconds(5))
    var objects: [DBusObjectPath: [String: DBusValue]] = [:]
    for entry in reply.first?.dictionaryEntries ?? [] {
      guard let path = entry.key.objectPathValue else { continue }
      var merged: [String: DBusValue] = [:]
      for interface in entry.value.dictionaryEntries ?? [] {
        guard let name = interface.key.stringValue,
          name == BlueZ.device || name == BlueZ.gattCharacteristic,
          let properties = try? interface.value.vardict()
        else { continue }
        merged.merge(properties) { first, _ in first }
      }
      if !merged.isEmpty { objects[path] = merged }
    }
    return objects
  }

  private func deviceProperties(_ path: DBusObjectPath) throws(DBusError) -> [String: DBusValue] {
    let reply = try connection.call(
      destination: BlueZ.service, path: path, interface: DBusStandardInterface.properties, method: "GetAll",
      arguments: [.string(BlueZ.device)], timeout: .seconds(5))
    return try reply.first?.vardict() ?? [:]
  }

  private func fail(_ reason: String) {
    reset()
    events.append(.connectFailed(reason))
  }

  private func lose(_ reason: String) {
    let wasReady = stage == .ready
    reset()
    events.append(wasReady ? .disconnected(reason) : .connectFailed(reason))
  }

  private func reset() {
    try? dataSocket?.close()
    dataSocket = nil
    stage = .idle
    dataQueue.removeAll()
    controlQueue.removeAll()
    controlInFlight = nil
    connectDeadline = nil
    retryConnectAt = nil
    for serial in pending.keys where pending[serial] != "Disconnect" { connection.cancel(serial) }
    pending = pending.filter { $0.value == "Disconnect" }
  }
}
