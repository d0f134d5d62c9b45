import Logging
import OTADBus
import OTALink
import OTASystem

/// The central role on BlueZ: the IO shell around `BlueZCentralMachine`. It turns what the
/// `DBusConnection` hands back (replies, signals) and what the `CentralLink` API asks into the
/// machine's events, and performs its actions: calls without blocking, timers, the data socket.
/// A drop of the link, or of the device, is reported as `.disconnected`; the next `connect` scans
/// again, so a device whose address changed across its restart is found by its service.
public final class BlueZCentral: CentralLink {
  let connection: DBusConnection
  let logger: Logger
  private var machine: BlueZCentralMachine
  private var lastNow: Duration = .zero
  /// The machine's calls in flight, both ways.
  private var calls: [DBusSerial: BlueZCallID] = [:]
  private var serials: [BlueZCallID: DBusSerial] = [:]
  /// When each running timer is due.
  private var timers: [BlueZTimer: Duration] = [:]
  /// AcquireWrite's socket (our duplicate, non-blocking).
  private var dataSocket: FileDescriptor?
  /// The L2CAP data channel, when open (non-blocking).
  private var channel: FileDescriptor?
  private var events: [CentralEvent] = []
  /// The sender wrote data since the last `service`: it may have more once it gets credit again.
  private var streaming = false
  /// Figures for reports: when the last connect started and when it was ready.
  public private(set) var connectStartedAt: Duration?
  public private(set) var readyAt: Duration?
  /// The controller's reports on the adapter's links (nil when not asked for).
  private let linkMonitor: LinkFactsMonitor?
  /// The address of the device last connected, for its link's facts.
  private var lastPeer: BluetoothAddress?

  public init(
    connection: DBusConnection, adapter: String = "hci0", selector: DeviceSelector, queueDepth: Int = 16,
    dataPath: DataPath = .gatt, linkFacts: Bool = false, logger: Logger
  ) throws(DBusError) {
    self.connection = connection
    self.logger = logger
    // Opened before any connection: the interval is in the Connection Complete event only.
    linkMonitor = linkFacts ? LinkFactsMonitor(adapter: adapter, logger: logger) : nil
    machine = BlueZCentralMachine(
      configuration: .init(adapter: adapter, selector: selector, queueDepth: queueDepth, dataPath: dataPath))
    try BlueZ.watchDevices(on: connection)
  }

  /// Devices seen: path to (address, name, RSSI).
  public var seen: [DBusObjectPath: (address: String, name: String?, rssi: Int16?)] {
    machine.devices.compactMapValues { properties in
      properties["Address"]?.stringValue.map {
        ($0, properties["Name"]?.stringValue, properties["RSSI"]?.int16Value)
      }
    }
  }

  /// The address of the device this link last connected to, as BlueZ reported it (nil before a
  /// connection): the gateway binds a target's serial to it.
  public var peerAddress: String? { lastPeer.map { "\($0)" } }

  public var descriptors: [Int32] { [connection.descriptor] + (linkMonitor?.descriptors ?? []) }

  /// The link to the device as the controller last reported it (kept after it closed); nil when
  /// the controller's events could not be read or none named the device.
  public var linkFacts: LinkFacts? {
    guard let linkMonitor, let lastPeer else { return nil }
    return linkMonitor.book.facts(for: lastPeer)
  }

  public var nextDeadline: Duration? {
    var deadlines = [connection.pollTimeout.map { lastNow + $0 }]
    deadlines += timers.values.map(Optional.some)
    if !events.isEmpty || streaming { deadlines.append(lastNow) }
    return deadlines.compactMap { $0 }.min()
  }

  public func connect(now: Duration) {
    lastNow = now
    connectStartedAt = now
    readyAt = nil
    run(.connect)
  }

  public func service(readable: Set<Int32>, now: Duration) -> [CentralEvent] {
    lastNow = now
    streaming = false
    for event in connection.process() {
      switch event {
      case .reply(let serial, let result):
        guard let id = calls.removeValue(forKey: serial) else { continue }
        serials[id] = nil
        run(.replied(id, result))
      case .signal(let signal):
        run(.signal(signal))
      case .disconnected:
        run(.busLost)
      }
    }
    for (timer, due) in timers.sorted(by: { $0.value < $1.value }) where due <= now && timers[timer] == due {
      timers[timer] = nil
      run(.timerFired(timer))
    }
    run(.loopTurn)
    if let linkMonitor {
      for change in linkMonitor.service(readable: readable) {
        if case .opened(let facts) = change { logger.debug("link to \(facts.peer): \(facts)") }
        if case .updated(let facts) = change { logger.debug("link to \(facts.peer) updated: \(facts)") }
      }
    }
    defer { events.removeAll() }
    return events
  }

  public func writeControl(_ bytes: [UInt8]) { run(.writeControl(bytes)) }

  public func writeData(_ bytes: [UInt8]) {
    streaming = true
    run(.writeData(bytes))
  }

  public func readInfo() { run(.readInfo) }

  public func readBlockHashes() { run(.readBlockHashes) }
  public func readIdentity() { run(.readIdentity) }

  public func disconnect() {
    run(.disconnect)
    connection.flush()
  }

  // MARK: Performing the machine's actions

  /// Hands `event` to the machine and performs what it asks, feeding back what the actions found
  /// (a call that could not be sent, what the data socket took) in order.
  private func run(_ event: BlueZCentralMachine.Event) {
    var queue = [event]
    while !queue.isEmpty {
      for action in machine.handle(queue.removeFirst()) {
        if let feedback = perform(action) { queue.append(feedback) }
      }
    }
  }

  private func perform(_ action: BlueZCentralMachine.Action) -> BlueZCentralMachine.Event? {
    switch action {
    case .call(let id, _, let request):
      do {
        let serial = try start(request)
        calls[serial] = id
        serials[id] = serial
      } catch {
        return .callNotSent(id, error)
      }
    case .send(let request):
      _ = try? start(request)
    case .cancel(let id):
      if let serial = serials.removeValue(forKey: id) {
        calls[serial] = nil
        connection.cancel(serial)
      }
    case .startTimer(let timer, let delay):
      timers[timer] = lastNow + delay
    case .stopTimer(let timer):
      timers[timer] = nil
    case .emit(let event):
      if case .connected = event {
        readyAt = lastNow
        // The peer whose link facts a push reports: read once per connection, not every turn.
        lastPeer = machine.deviceAddress ?? lastPeer
      }
      events.append(event)
    case .adoptDataSocket(let descriptor):
      guard let owned = try? descriptor.duplicate() else {
        return .dataSocketFailed("AcquireWrite gave no socket")
      }
      guard (try? owned.makeNonBlocking()) != nil else {
        return .dataSocketFailed("AcquireWrite's socket cannot be made non-blocking")
      }
      dataSocket = owned
      return .dataSocketAdopted
    case .sendData(let packets):
      return sendData(packets)
    case .closeDataSocket:
      try? dataSocket?.close()
      dataSocket = nil
    case .openChannel(let endpoint, let security):
      return openChannel(endpoint, security: security)
    case .sendChannelData(let packets):
      guard let channel else { return .channelDropped("the channel closed") }
      return send(packets, into: channel, failed: { .channelDropped("send failed: \($0)") })
    case .closeChannel:
      try? channel?.close()
      channel = nil
    case .log(let level, let message):
      logger.log(level: level, "\(message)")
    }
    return nil
  }

  private func start(_ request: BlueZRequest) throws(DBusError) -> DBusSerial {
    try connection.startCall(
      destination: BlueZ.service, path: request.path, interface: request.interface, method: request.method,
      arguments: request.arguments, timeout: request.timeout)
  }

  /// How long opening the L2CAP channel may block the loop.
  static let channelConnectTimeout = Duration.seconds(5)

  /// Opens the L2CAP data channel: a blocking connect bounded by a send timeout (the loop waits
  /// for it, once per connection), then non-blocking like the data socket.
  private func openChannel(_ endpoint: L2CAPEndpoint, security: BluetoothSecurity?)
    -> BlueZCentralMachine.Event
  {
    do {
      let socket = try FileDescriptor.l2capSocket()
      do {
        // Bound to an LE address type first: an unbound socket stays BR/EDR, and the kernel then
        // sends basic frames without the SDU length (the device resets the channel at once).
        try socket.bindL2CAP(L2CAPEndpoint(address: .any, type: .lePublic, psm: 0))
        if let security { try socket.setBluetoothSecurity(security) }
        try socket.setSendTimeout(Self.channelConnectTimeout)
        try socket.connectL2CAP(to: endpoint)
        try socket.makeNonBlocking()
      } catch {
        try? socket.close()
        throw error
      }
      channel = socket
      let parameters = socket.l2capParameters
      logger.info(
        "L2CAP data channel open",
        metadata: [
          "psm": "0x\(String(endpoint.psm, radix: 16))",
          "send-mtu": "\(parameters.sendMTU.map(String.init) ?? "?")",
          "receive-mtu": "\(parameters.receiveMTU.map(String.init) ?? "?")",
          "phy": "\(parameters.phy ?? "?")",
        ])
      return .channelOpened(parameters)
    } catch let error as SystemError {
      return .channelFailed("\(error.operation): \(error.errno)")
    } catch {
      return .channelFailed("\(error)")
    }
  }

  /// Writes chunks into bluetoothd's socket until it is full; each write is one ATT write.
  private func sendData(_ packets: [[UInt8]]) -> BlueZCentralMachine.Event {
    guard let socket = dataSocket else { return .dataSocketFailed("the data socket closed") }
    return send(packets, into: socket, failed: { _ in .dataSocketFailed("the data socket closed") })
  }

  /// Writes packets into a packet socket until it is full: `.dataSent` with how many it took.
  private func send(
    _ packets: [[UInt8]], into socket: FileDescriptor, failed: (SystemError) -> BlueZCentralMachine.Event
  ) -> BlueZCentralMachine.Event {
    var sent = 0
    for packet in packets {
      // nil: the socket is full (EAGAIN, ENOBUFS); a failure: it closed.
      let written = packet.withUnsafeBytes { bytes in
        Result { () throws(SystemError) in try socket.send(bytes) }
      }
      switch written {
      case .success(packet.count): sent += 1
      case .success(nil): return .dataSent(count: sent)
      case .success(let count?):
        return failed(SystemError(operation: "send", path: "short \(count)", errno: .io))
      case .failure(let error): return failed(error)
      }
    }
    return .dataSent(count: sent)
  }
}
