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
  public let configuration: Configuration
  public internal(set) var phase = Phase.idle
  /// The device last chosen; kept after a failure so that `disconnect` still drops its link.
  public internal(set) var device: DBusObjectPath?
  /// Device1 properties of the devices BlueZ told about, kept current from PropertiesChanged.
  public internal(set) var devices: [DBusObjectPath: [String: DBusValue]] = [:]
  /// Known devices whose direct connect failed: forgotten (RemoveDevice) at the next attempt, so
  /// that a device that came back under another address is discovered afresh.
  public internal(set) var staleDevices: Set<DBusObjectPath> = []
  /// Why the L2CAP data channel failed on this device, if it did: `auto` then stays on GATT.
  public internal(set) var channelFailure: String?
  /// The calls started and not yet answered, by the machine's own ids.
  var pending: [BlueZCallID: BlueZCall] = [:]
  /// The timers started and not yet fired or stopped.
  public internal(set) var runningTimers: Set<BlueZTimer> = []
  var nextCall = 0
  /// The actions of the event being handled.
  var out: [Action] = []

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
    case .readBlockHashes: readBlockHashes()
    case .readIdentity: readIdentity()
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
    case .channelOpened(let parameters): channelOpened(parameters)
    case .channelFailed(let reason): channelFailed(reason)
    case .channelDropped(let reason): channelDropped(reason)
    case .dataSocketFailed(let reason):
      switch phase {
      case .ready, .preparing: lose(reason)
      default: break
      }
    }
    return out
  }

  // MARK: Ending

  mutating func disconnect() {
    let wasActive = phase != .idle
    if phase == .discovering {
      stopDiscovery()
    } else if let device {
      out.append(.send(BlueZRequest(path: device, interface: BlueZ.device, method: "Disconnect")))
    }
    reset()
    if wasActive { out.append(.emit(.disconnected("the central disconnected"))) }
  }

  mutating func startOverSoon() {
    reset(keepingDeadline: true)
    startTimer(.retryConnect, after: Self.retryDelay)
  }

  mutating func fail(_ reason: String) {
    reset()
    out.append(.emit(.connectFailed(reason)))
  }

  mutating func lose(_ reason: String) {
    let wasReady = isReady
    reset()
    out.append(.emit(wasReady ? .disconnected(reason) : .connectFailed(reason)))
  }

  mutating func reset(keepingDeadline: Bool = false) {
    if case .ready(let ready) = phase {
      if ready.transport == .socket || ready.gattTransport == .socket { out.append(.closeDataSocket) }
      if ready.transport == .channel { out.append(.closeChannel) }
    }
    if case .preparing(_, _?) = phase { out.append(.closeDataSocket) }
    phase = .idle
    for id in pending.keys.sorted(by: { $0.rawValue < $1.rawValue }) { out.append(.cancel(id)) }
    pending = [:]
    for timer in BlueZTimer.allCases where !(keepingDeadline && timer == .connectDeadline) {
      stopTimer(timer)
    }
  }

  // MARK: Helpers

  mutating func startTimer(_ timer: BlueZTimer, after delay: Duration) {
    runningTimers.insert(timer)
    out.append(.startTimer(timer, after: delay))
  }

  mutating func stopTimer(_ timer: BlueZTimer) {
    guard runningTimers.remove(timer) != nil else { return }
    out.append(.stopTimer(timer))
  }

  mutating func start(_ call: BlueZCall, _ request: BlueZRequest) {
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
