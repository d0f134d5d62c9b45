import Logging
import OTADBus
import OTALink

/// The BlueZ central as a value: events in (a request from the `CentralLink` API, the answer to a
/// call, a signal, a timer, what the data socket took), actions out (call this method, start this
/// timer, hand the sender this event, send these chunks). No IO and no clock: `BlueZCentral` is the
/// shell that performs the actions on a `DBusConnection` and feeds back what happened, and the tests
/// play bluetoothd's part by hand.
///
/// The way to ready: discovery filtered by the OTA service (a device BlueZ already knows is connected
/// to directly), Connect, ServicesResolved, the OTA characteristics, StartNotify on the control point,
/// AcquireWrite on data (refused: data goes as WriteValue commands). Every call is asynchronous.
public struct BlueZCentralMachine: Sendable {
  public struct Configuration: Sendable {
    public var adapter: String
    public var selector: DeviceSelector
    /// How many data writes may wait in the machine (the credit given to the sender).
    public var queueDepth: Int
    /// How many WriteValue data commands may be outstanding when AcquireWrite was refused.
    public var commandsInFlight: Int

    public init(
      adapter: String = "hci0", selector: DeviceSelector, queueDepth: Int = 16, commandsInFlight: Int = 4
    ) {
      self.adapter = adapter
      self.selector = selector
      self.queueDepth = queueDepth
      self.commandsInFlight = commandsInFlight
    }
  }

  public enum Event: Equatable, Sendable {
    // The CentralLink API.
    case connect
    case disconnect
    case writeControl([UInt8])
    case writeData([UInt8])
    case readInfo
    /// The loop came around (`service`): flush data, report credit.
    case loopTurn
    // The bus.
    case replied(BlueZCallID, Result<[DBusValue], DBusError>)
    /// A call could not even be sent.
    case callNotSent(BlueZCallID, DBusError)
    case signal(DBusSignal)
    case busLost
    case timerFired(BlueZTimer)
    // The data socket, after `.adoptDataSocket` and `.sendData`.
    case dataSocketAdopted
    /// The data socket took the first `count` of the chunks of the last `.sendData`.
    case dataSent(count: Int)
    case dataSocketFailed(String)
  }

  public enum Action: Equatable, Sendable {
    /// Start this call and report its answer as `.replied(id, …)`.
    case call(BlueZCallID, BlueZCall, BlueZRequest)
    /// Send this call; its answer does not matter (StopDiscovery, RemoveDevice, Disconnect).
    case send(BlueZRequest)
    /// Forget a call: its answer, if one still comes, is dropped.
    case cancel(BlueZCallID)
    case startTimer(BlueZTimer, after: Duration)
    case stopTimer(BlueZTimer)
    /// Hand this to the sender.
    case emit(CentralEvent)
    /// Take a duplicate of AcquireWrite's socket, non-blocking; answer `.dataSocketAdopted` or `.dataSocketFailed`.
    case adoptDataSocket(DBusFileDescriptor)
    /// Write these chunks into the data socket, in order, until it is full; answer `.dataSent`.
    case sendData([[UInt8]])
    case closeDataSocket
    case log(Logger.Level, String)
  }

  /// The OTA characteristics of the connected device.
  public struct Characteristics: Equatable, Sendable {
    public var control: DBusObjectPath
    public var data: DBusObjectPath
    public var info: DBusObjectPath
    /// The data characteristic's `MTU` property (BlueZ 5.62 and later), for when AcquireWrite is refused.
    public var mtu: Int?
  }

  /// How data reaches the device.
  public enum Transport: Equatable, Sendable {
    /// AcquireWrite's socket: each write is one ATT write command.
    case socket
    /// WriteValue with type command, this many outstanding.
    case writeCommands(inFlight: Int)
  }

  public struct Ready: Equatable, Sendable {
    public var characteristics: Characteristics
    public var mtu: Int
    public var transport: Transport
    var dataQueue: [[UInt8]] = []
    var controlQueue: [[UInt8]] = []
    var controlInFlight = false
    /// Info read so far, while a long read is under way.
    var infoRead: [UInt8]?
  }

  public enum Phase: Equatable, Sendable {
    case idle
    case discovering
    case connecting
    /// Connected; waiting for ServicesResolved.
    case resolving
    /// Services resolved; collecting the OTA characteristics (uuid to path, MTU of data).
    case listing([String: DBusObjectPath], dataMTU: Int?)
    /// StartNotify, then AcquireWrite; then adopting its socket (with the MTU it gave).
    case preparing(Characteristics, acquiredMTU: Int?)
    case ready(Ready)
  }

  public let configuration: Configuration
  public private(set) var phase = Phase.idle
  /// The device last chosen; kept after a failure so that `disconnect` still drops its link.
  public private(set) var device: DBusObjectPath?
  /// Device1 properties of the devices BlueZ told about, kept current from PropertiesChanged.
  public private(set) var devices: [DBusObjectPath: [String: DBusValue]] = [:]
  /// Known devices whose direct connect failed: forgotten (RemoveDevice) at the next attempt, so
  /// that a device that came back under another address is discovered afresh.
  public private(set) var staleDevices: Set<DBusObjectPath> = []
  private var pending: [BlueZCallID: BlueZCall] = [:]
  /// The timers started and not yet fired or stopped.
  public private(set) var runningTimers: Set<BlueZTimer> = []
  private var nextCall = 0
  private var out: [Action] = []

  /// The longest Info this central reads.
  static let infoLimit = 4096
  static let retryDelay = Duration.milliseconds(500)

  public init(configuration: Configuration) {
    self.configuration = configuration
  }

  /// The calls waiting for an answer.
  public var pendingCalls: [BlueZCall] { pending.sorted { $0.key.rawValue < $1.key.rawValue }.map(\.value) }

  public var isReady: Bool { if case .ready = phase { true } else { false } }

  var adapterPath: DBusObjectPath { BlueZ.adapterPath(configuration.adapter) }

  public mutating func handle(_ event: Event) -> [Action] {
    out = []
    switch event {
    case .connect: connect()
    case .disconnect: disconnect()
    case .writeControl(let bytes): writeControl(bytes)
    case .writeData(let bytes): writeData(bytes)
    case .readInfo: readInfo()
    case .loopTurn: loopTurn()
    case .replied(let id, let result):
      guard let call = pending.removeValue(forKey: id) else { break }
      switch result {
      case .success(let values): succeeded(call, values)
      case .failure(let error): failed(call, BlueZError(error), error)
      }
    case .callNotSent(let id, let error):
      guard let call = pending.removeValue(forKey: id) else { break }
      if isReady {
        lose("\(call.method) could not be sent: \(error.message)")
      } else {
        fail("\(call.method): \(error.message)")
      }
    case .signal(let signal): handle(signal)
    case .busLost: lose("the system bus connection was lost")
    case .timerFired(let timer):
      guard runningTimers.remove(timer) != nil else { break }
      fired(timer)
    case .dataSocketAdopted: dataSocketAdopted()
    case .dataSent(let count): dataSent(count)
    case .dataSocketFailed(let reason):
      switch phase {
      case .ready, .preparing: lose(reason)
      default: break
      }
    }
    return out
  }

  // MARK: Connecting

  private mutating func connect() {
    reset()
    startTimer(.connectDeadline, after: .seconds(20))
    startDiscovery()
  }

  private mutating func startDiscovery() {
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
  private mutating func listedDevices(_ values: [DBusValue]) {
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

  private mutating func consider(_ path: DBusObjectPath, _ properties: [String: DBusValue]) {
    guard phase == .discovering, path.isDescendant(of: adapterPath),
      configuration.selector.matches(properties)
    else { return }
    out.append(.log(.debug, "found \(path) (rssi \(properties["RSSI"]?.int16Value.map { "\($0)" } ?? "?"))"))
    stopDiscovery()
    device = path
    phase = .connecting
    start(.connect(path), BlueZRequest(path: path, interface: BlueZ.device, method: "Connect"))
  }

  private mutating func stopDiscovery() {
    out.append(.send(BlueZRequest(path: adapterPath, interface: BlueZ.adapter, method: "StopDiscovery")))
  }

  private mutating func listCharacteristics() {
    phase = .listing([:], dataMTU: nil)
    start(
      .listCharacteristics,
      BlueZRequest(
        path: .root, interface: DBusStandardInterface.objectManager, method: "GetManagedObjects",
        timeout: .seconds(5)))
  }

  /// Characteristics under the device, from GetManagedObjects or InterfacesAdded: once all three
  /// OTA ones are known, asks for notifications.
  private mutating func found(characteristics: [DBusObjectPath: [String: DBusValue]]) {
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
    let found = Characteristics(control: control, data: data, info: info, mtu: dataMTU)
    phase = .preparing(found, acquiredMTU: nil)
    start(
      .startNotify, BlueZRequest(path: control, interface: BlueZ.gattCharacteristic, method: "StartNotify"))
  }

  private mutating func becomeReady(_ characteristics: Characteristics, mtu: Int, transport: Transport) {
    // BlueZ 5.66's server side acquires its own socket on the first write command and loses that
    // write: prime it with one byte, which the device drops as a malformed chunk and counts.
    phase = .ready(Ready(characteristics: characteristics, mtu: mtu, transport: transport, dataQueue: [[0]]))
    stopTimer(.connectDeadline)
    flushData()
    out.append(.emit(.connected(mtu: mtu)))
  }

  private mutating func dataSocketAdopted() {
    guard case .preparing(let characteristics, let mtu?) = phase else { return }
    out.append(.log(.debug, "data socket acquired (mtu \(mtu))"))
    becomeReady(characteristics, mtu: mtu, transport: .socket)
  }

  // MARK: Answers

  private mutating func succeeded(_ call: BlueZCall, _ values: [DBusValue]) {
    switch call {
    case .setDiscoveryFilter:
      guard phase == .discovering else { return }
      start(
        .startDiscovery,
        BlueZRequest(
          path: adapterPath, interface: BlueZ.adapter, method: "StartDiscovery", timeout: .seconds(5)))
    case .startDiscovery:
      guard phase == .discovering else { return }
      start(
        .listDevices,
        BlueZRequest(
          path: .root, interface: DBusStandardInterface.objectManager, method: "GetManagedObjects",
          timeout: .seconds(5)))
    case .listDevices:
      guard phase == .discovering else { return }
      listedDevices(values)
    case .deviceProperties(let path):
      guard let properties = try? values.first?.vardict() else { return }
      devices[path] = properties
      consider(path, properties)
    case .connect:
      guard phase == .connecting, let device else { return }
      phase = .resolving
      start(
        .checkServicesResolved(device),
        BlueZRequest(
          path: device, interface: DBusStandardInterface.properties, method: "GetAll",
          arguments: [.string(BlueZ.device)], timeout: .seconds(5)))
    case .checkServicesResolved(let path):
      guard let properties = try? values.first?.vardict() else { return }
      devices[path] = properties
      if phase == .resolving, properties["ServicesResolved"]?.boolValue == true { listCharacteristics() }
    case .listCharacteristics:
      guard case .listing = phase else { return }
      found(characteristics: Self.objects(in: values, interface: BlueZ.gattCharacteristic))
      // Not all there yet: they may still come as InterfacesAdded, for a moment.
      if case .listing = phase { startTimer(.characteristicsLate, after: .seconds(1)) }
    case .startNotify:
      guard case .preparing(let characteristics, _) = phase else { return }
      start(
        .acquireWrite,
        BlueZRequest(
          path: characteristics.data, interface: BlueZ.gattCharacteristic, method: "AcquireWrite",
          arguments: [.vardict([:])]))
    case .acquireWrite:
      guard case .preparing(let characteristics, _) = phase else { return }
      guard values.count == 2, let descriptor = values[0].fileDescriptor, let mtu = values[1].uint16Value
      else {
        fail("AcquireWrite gave no socket")
        return
      }
      phase = .preparing(characteristics, acquiredMTU: Int(mtu))
      out.append(.adoptDataSocket(descriptor))
    case .writeControl:
      controlWritten()
    case .writeData:
      dataCommandWritten()
    case .readInfo(let offset):
      infoRead(offset: offset, values.first?.byteArray ?? [])
    }
  }

  private mutating func failed(_ call: BlueZCall, _ error: BlueZError, _ raw: DBusError) {
    let detail = "\(raw.name): \(raw.message)"
    switch (call, error) {
    case (.setDiscoveryFilter, .inProgress), (.startDiscovery, .inProgress):
      // Already discovering: fine.
      succeeded(call, [])
    case (.setDiscoveryFilter, _), (.startDiscovery, _):
      guard phase == .discovering else { return }
      fail("could not start discovery on \(configuration.adapter): \(raw.message)")
    case (.listDevices, _), (.deviceProperties, _), (.checkServicesResolved, _):
      // Discovery goes on through signals; ServicesResolved may still come as a signal.
      out.append(.log(.debug, "\(call.method) failed: \(detail)"))
    case (.connect, .inProgress):
      guard phase == .connecting else { return }
      out.append(.log(.debug, "a Connect is already under way: calling again shortly"))
      startTimer(.connectAgain, after: Self.retryDelay)
    case (.connect, .alreadyConnected):
      succeeded(call, [])
    case (.connect(let path), _):
      guard phase == .connecting else { return }
      staleDevices.insert(path)
      fail("connecting failed: \(raw.message)")
    case (.acquireWrite, .notPermitted), (.acquireWrite, .notSupported), (.acquireWrite, .failed):
      guard case .preparing(let characteristics, _) = phase else { return }
      out.append(.log(.info, "AcquireWrite refused (\(detail)): data goes as WriteValue commands"))
      becomeReady(characteristics, mtu: characteristics.mtu ?? 23, transport: .writeCommands(inFlight: 0))
    case (.writeControl, _):
      out.append(.log(.warning, "control-point write failed: \(detail)"))
      out.append(.emit(.controlWriteFailed(0xFF)))
      controlWritten()
    case (.writeData, _):
      out.append(.log(.warning, "data write failed: \(detail)"))
      dataCommandWritten()
    case (.readInfo(let offset), .invalidOffset) where offset > 0:
      // Past the end: what was read is the whole value.
      infoRead(offset: offset, [])
    case (.readInfo, _):
      lose("reading Info failed: \(raw.message)")
    case (_, .notConnected) where !isReady:
      // The link was still going down (a previous central's Disconnect): start over shortly, until
      // the connect deadline.
      out.append(.log(.debug, "\(call.method) met a link going down: connecting again shortly"))
      startOverSoon()
    case (_, _):
      if isReady {
        out.append(.log(.warning, "\(call.method) failed: \(detail)"))
      } else {
        fail("\(call.method) failed: \(raw.message)")
      }
    }
  }

  // MARK: Signals

  private mutating func handle(_ signal: DBusSignal) {
    if signal.member == "InterfacesAdded", signal.arguments.count == 2,
      let path = signal.arguments[0].objectPathValue,
      let interfaces = signal.arguments[1].dictionaryEntries
    {
      for entry in interfaces {
        guard let properties = try? entry.value.vardict() else { continue }
        switch entry.key.stringValue {
        case BlueZ.device:
          devices[path] = properties
          consider(path, properties)
        case BlueZ.gattCharacteristic:
          found(characteristics: [path: properties])
        default: break
        }
      }
      return
    }
    guard signal.member == "PropertiesChanged", signal.arguments.count >= 2,
      let interface = signal.arguments[0].stringValue, let changed = try? signal.arguments[1].vardict()
    else { return }
    if interface == BlueZ.device {
      deviceChanged(
        signal.path, changed,
        invalidated: signal.arguments.count > 2 ? signal.arguments[2].stringArray ?? [] : [])
    } else if interface == BlueZ.gattCharacteristic, case .ready(let ready) = phase,
      signal.path == ready.characteristics.control, let value = changed["Value"]?.byteArray
    {
      out.append(.emit(.notification(value)))
    }
  }

  private mutating func deviceChanged(
    _ path: DBusObjectPath, _ changed: [String: DBusValue], invalidated: [String]
  ) {
    if var known = devices[path] {
      known.merge(changed) { _, new in new }
      for name in invalidated { known[name] = nil }
      devices[path] = known
    }
    if phase == .discovering, changed["RSSI"] != nil {
      if let known = devices[path] {
        consider(path, known)
      } else if !pending.values.contains(.deviceProperties(path)) {
        start(
          .deviceProperties(path),
          BlueZRequest(
            path: path, interface: DBusStandardInterface.properties, method: "GetAll",
            arguments: [.string(BlueZ.device)], timeout: .seconds(5)))
      }
    }
    guard path == device, phase != .idle else { return }
    if changed["Connected"]?.boolValue == false {
      if isReady {
        lose("the device disconnected")
      } else if phase != .discovering {
        // A link going down while we set up (a previous central's Disconnect): start over shortly.
        startOverSoon()
      }
    } else if changed["ServicesResolved"]?.boolValue == true, phase == .resolving {
      listCharacteristics()
    }
  }

  // MARK: Timers

  private mutating func fired(_ timer: BlueZTimer) {
    switch timer {
    case .connectDeadline:
      guard !isReady else { return }
      let discovering = phase == .discovering
      if discovering { stopDiscovery() }
      fail(discovering ? "no device matching \(configuration.selector) was found" : "connecting timed out")
    case .retryConnect:
      guard phase == .idle else { return }
      startDiscovery()
    case .connectAgain:
      guard phase == .connecting, let device else { return }
      start(.connect(device), BlueZRequest(path: device, interface: BlueZ.device, method: "Connect"))
    case .characteristicsLate:
      guard case .listing = phase else { return }
      fail("the device does not offer the OTA characteristics")
    case .socketRoom:
      flushData()
    }
  }

  // MARK: Writing and reading

  private mutating func writeControl(_ bytes: [UInt8]) {
    guard case .ready(var ready) = phase else { return }
    ready.controlQueue.append(bytes)
    phase = .ready(ready)
    sendNextControl()
  }

  private mutating func controlWritten() {
    guard case .ready(var ready) = phase else { return }
    ready.controlInFlight = false
    phase = .ready(ready)
    sendNextControl()
  }

  private mutating func sendNextControl() {
    guard case .ready(var ready) = phase, !ready.controlInFlight, !ready.controlQueue.isEmpty else { return }
    let bytes = ready.controlQueue.removeFirst()
    ready.controlInFlight = true
    phase = .ready(ready)
    start(
      .writeControl,
      BlueZRequest(
        path: ready.characteristics.control, interface: BlueZ.gattCharacteristic, method: "WriteValue",
        arguments: [.bytes(bytes), .vardict(["type": .string("request")])]))
  }

  private mutating func writeData(_ bytes: [UInt8]) {
    guard case .ready(var ready) = phase else { return }
    ready.dataQueue.append(bytes)
    phase = .ready(ready)
    flushData()
  }

  /// Moves queued chunks towards the device: into the socket (the shell writes until it is full),
  /// or as WriteValue commands up to the limit in flight.
  private mutating func flushData() {
    guard case .ready(var ready) = phase, !ready.dataQueue.isEmpty else { return }
    switch ready.transport {
    case .socket:
      out.append(.sendData(ready.dataQueue))
    case .writeCommands(var inFlight):
      while inFlight < configuration.commandsInFlight, !ready.dataQueue.isEmpty {
        let bytes = ready.dataQueue.removeFirst()
        inFlight += 1
        start(
          .writeData,
          BlueZRequest(
            path: ready.characteristics.data, interface: BlueZ.gattCharacteristic, method: "WriteValue",
            arguments: [.bytes(bytes), .vardict(["type": .string("command")])]))
      }
      ready.transport = .writeCommands(inFlight: inFlight)
      phase = .ready(ready)
    }
  }

  private mutating func dataSent(_ count: Int) {
    guard case .ready(var ready) = phase, ready.transport == .socket else { return }
    ready.dataQueue.removeFirst(min(count, ready.dataQueue.count))
    phase = .ready(ready)
    if !ready.dataQueue.isEmpty {
      out.append(.log(.trace, "data socket full (\(ready.dataQueue.count) queued)"))
      startTimer(.socketRoom, after: .milliseconds(2))
    }
  }

  private mutating func dataCommandWritten() {
    guard case .ready(var ready) = phase, case .writeCommands(let inFlight) = ready.transport else { return }
    ready.transport = .writeCommands(inFlight: max(0, inFlight - 1))
    phase = .ready(ready)
    flushData()
  }

  private mutating func loopTurn() {
    flushData()
    guard case .ready(let ready) = phase else { return }
    var waiting = ready.dataQueue.count
    if case .writeCommands(let inFlight) = ready.transport { waiting += inFlight }
    out.append(.emit(.writable(configuration.queueDepth - waiting)))
  }

  private mutating func readInfo() {
    guard case .ready(var ready) = phase, ready.infoRead == nil else { return }
    ready.infoRead = []
    phase = .ready(ready)
    readInfo(at: 0, ready)
  }

  private mutating func readInfo(at offset: Int, _ ready: Ready) {
    let options: [String: DBusValue] = offset == 0 ? [:] : ["offset": .uint16(UInt16(offset))]
    start(
      .readInfo(offset: offset),
      BlueZRequest(
        path: ready.characteristics.info, interface: BlueZ.gattCharacteristic, method: "ReadValue",
        arguments: [.vardict(options)]))
  }

  /// One step of the long read: BlueZ reads the whole value itself, but an answer that fills a read
  /// response exactly (MTU − 1 bytes) may have more behind it, so the read goes on from there until
  /// an answer is short, empty, or past the end.
  private mutating func infoRead(offset: Int, _ bytes: [UInt8]) {
    guard case .ready(var ready) = phase, var read = ready.infoRead, offset == read.count else { return }
    read += bytes
    if !bytes.isEmpty, bytes.count == ready.mtu - 1, read.count < Self.infoLimit {
      ready.infoRead = read
      phase = .ready(ready)
      readInfo(at: read.count, ready)
    } else {
      ready.infoRead = nil
      phase = .ready(ready)
      out.append(.emit(.info(read)))
    }
  }

  // MARK: Ending

  private mutating func disconnect() {
    let wasActive = phase != .idle
    if phase == .discovering {
      stopDiscovery()
    } else if let device {
      out.append(.send(BlueZRequest(path: device, interface: BlueZ.device, method: "Disconnect")))
    }
    reset()
    if wasActive { out.append(.emit(.disconnected("the central disconnected"))) }
  }

  private mutating func startOverSoon() {
    reset(keepingDeadline: true)
    startTimer(.retryConnect, after: Self.retryDelay)
  }

  private mutating func fail(_ reason: String) {
    reset()
    out.append(.emit(.connectFailed(reason)))
  }

  private mutating func lose(_ reason: String) {
    let wasReady = isReady
    reset()
    out.append(.emit(wasReady ? .disconnected(reason) : .connectFailed(reason)))
  }

  private mutating func reset(keepingDeadline: Bool = false) {
    if case .ready(let ready) = phase, ready.transport == .socket { out.append(.closeDataSocket) }
    if case .preparing(_, _?) = phase { out.append(.closeDataSocket) }
    phase = .idle
    for id in pending.keys.sorted(by: { $0.rawValue < $1.rawValue }) { out.append(.cancel(id)) }
    pending = [:]
    for timer in BlueZTimer.allCases where !(keepingDeadline && timer == .connectDeadline) {
      stopTimer(timer)
    }
  }

  // MARK: Helpers

  private mutating func startTimer(_ timer: BlueZTimer, after delay: Duration) {
    runningTimers.insert(timer)
    out.append(.startTimer(timer, after: delay))
  }

  private mutating func stopTimer(_ timer: BlueZTimer) {
    guard runningTimers.remove(timer) != nil else { return }
    out.append(.stopTimer(timer))
  }

  private mutating func start(_ call: BlueZCall, _ request: BlueZRequest) {
    nextCall += 1
    let id = BlueZCallID(nextCall)
    pending[id] = call
    out.append(.call(id, call, request))
  }

  /// The objects in a GetManagedObjects answer that have `interface`, with its properties.
  static func objects(in values: [DBusValue], interface: String) -> [DBusObjectPath: [String: DBusValue]] {
    var objects: [DBusObjectPath: [String: DBusValue]] = [:]
    for entry in values.first?.dictionaryEntries ?? [] {
      guard let path = entry.key.objectPathValue else { continue }
      for candidate in entry.value.dictionaryEntries ?? [] where candidate.key.stringValue == interface {
        if let properties = try? candidate.value.vardict() { objects[path] = properties }
      }
    }
    return objects
  }
}
