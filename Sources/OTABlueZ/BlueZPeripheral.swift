import Logging
import OTADBus
import OTALink
import OTASystem
import OTAWire

/// The device role on BlueZ: registers the GATT application and the advertisement with bluetoothd
/// over D-Bus, and turns what centrals do into `PeripheralEvent`s. Registers again when bluetoothd
/// restarts or the adapter comes back on. The control point stays on WriteValue (so errors reach the
/// central); the data characteristic takes chunks through AcquireWrite; responses go out as
/// notifications (PropertiesChanged on Value).
public final class BlueZPeripheral: PeripheralLink {
  public struct Options: Sendable {
    public var adapter: String
    public var localName: String
    /// Mark the control point and data characteristic encrypt-authenticated-write (bonded links only).
    public var requireEncryption: Bool
    public var root: DBusObjectPath
    /// Export the SMP service (MCUmgr over Bluetooth) beside the OTA service.
    public var smp: Bool
    /// Export Nordic's Legacy DFU service (docs/NORDIC-DFU.md) beside the OTA service.
    public var legacyDFU = false
    /// Export Nordic's Secure DFU service (0xFE59) beside the OTA service.
    public var secureDFU = false
    /// Listen on an LE L2CAP channel for data, on this PSM (0: a dynamic one the kernel picks);
    /// nil: no channel.
    public var l2capPSM: UInt16?
    /// Read the link's parameters from the controller's events (a raw HCI socket, CAP_NET_RAW) and
    /// log them at each connection and update.
    public var linkFacts: Bool

    public init(
      adapter: String = "hci0", localName: String = "BlueOTA", requireEncryption: Bool = false,
      root: DBusObjectPath = "/org/blueota", smp: Bool = false, l2capPSM: UInt16? = nil,
      linkFacts: Bool = true
    ) {
      self.l2capPSM = l2capPSM
      self.linkFacts = linkFacts
      self.adapter = adapter
      self.localName = localName
      self.requireEncryption = requireEncryption
      self.root = root
      self.smp = smp
    }
  }

  public let options: Options
  let connection: DBusConnection
  let application: GattApplication
  let inbox = PeripheralInbox()
  let logger: Logger
  private var lastNow: Duration = .zero
  private var pending: [DBusSerial: String] = [:]
  private var retryRegistrationAt: Duration?
  /// When bluetoothd accepted the advertisement (the loop's time), for the harness's figures.
  public private(set) var advertisingSince: Duration?
  public private(set) var applicationRegistered = false
  /// The L2CAP data channel's listener, when it is on and the kernel let it listen.
  let dataChannel: DataChannelListener?
  /// The controller's reports on the adapter's links, when the kernel lets otad read them.
  let linkFacts: LinkFactsMonitor?

  public init(connection: DBusConnection, options: Options, logger: Logger) throws(DBusError) {
    self.connection = connection
    self.options = options
    self.logger = logger
    dataChannel = Self.listen(options, logger: logger)
    linkFacts = options.linkFacts ? LinkFactsMonitor(adapter: options.adapter, logger: logger) : nil
    application = GattApplication(
      root: options.root, requireEncryption: options.requireEncryption, localName: options.localName,
      smp: options.smp, legacyDFU: options.legacyDFU, secureDFU: options.secureDFU)
    inbox.onAcquireWrite = { [logger] mtu in
      logger.debug("bluetoothd acquired the data socket", metadata: ["mtu": "\(mtu)"])
    }
    for object in application.objects(inbox) { try connection.export(object) }
    try connection.addObjectManager(at: options.root)
    let adapter = BlueZ.adapterPath(options.adapter)
    try connection.addMatch(
      .signals(
        sender: BlueZ.service, pathNamespace: adapter, interface: DBusStandardInterface.properties,
        member: "PropertiesChanged"))
    try connection.addMatch(
      .signals(
        sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
        arg0: BlueZ.service))
    try register()
  }

  /// Asks bluetoothd to take the application and the advertisement. Asynchronous: bluetoothd calls
  /// back into the application (GetManagedObjects) before it answers.
  private func register() throws(DBusError) {
    let adapter = BlueZ.adapterPath(options.adapter)
    let app = try connection.startCall(
      destination: BlueZ.service, path: adapter, interface: BlueZ.gattManager, method: "RegisterApplication",
      arguments: [.objectPath(options.root), .vardict([:])])
    pending[app] = "RegisterApplication"
    let advertisement = try connection.startCall(
      destination: BlueZ.service, path: adapter, interface: BlueZ.advertisingManager,
      method: "RegisterAdvertisement", arguments: [.objectPath(application.advertisement), .vardict([:])])
    pending[advertisement] = "RegisterAdvertisement"
  }

  /// The channel's listening socket: on `l2capPSM`, and with pairing required at `BT_SECURITY`
  /// high, what `encrypt-authenticated-write` asks of the GATT writes (medium would let Just Works
  /// through). Nil without a PSM: no channel.
  static func channelOptions(_ options: Options) -> DataChannelListener.Options? {
    options.l2capPSM.map { .init(psm: $0, security: options.requireEncryption ? .high : nil) }
  }

  private static func listen(_ options: Options, logger: Logger) -> DataChannelListener? {
    guard let channel = channelOptions(options) else { return nil }
    do {
      let listener = try DataChannelListener(options: channel, logger: logger)
      logger.notice(
        "L2CAP data channel listening",
        metadata: [
          "psm": "0x\(String(listener.psm, radix: 16))", "receive-mtu": "\(DataChannelRules.receiveMTU)",
          "security": "\(options.requireEncryption ? "high" : "low")",
        ])
      return listener
    } catch {
      logger.warning("no L2CAP data channel (data over GATT only): \(error)")
      return nil
    }
  }

  public var dataChannelPSM: UInt16 { dataChannel?.psm ?? 0 }

  /// One line per connection and per change of its parameters (docs/OTAD.md).
  private func logLinks(_ changes: [LinkFactsBook.Change]) {
    for change in changes {
      switch change {
      case .opened(let facts) where facts.role == .peripheral:
        logger.notice("link to central \(facts.peer): \(facts)", metadata: ["handle": "\(facts.handle)"])
      case .updated(let facts) where facts.role == .peripheral:
        logger.notice(
          "link to central \(facts.peer) updated: \(facts)", metadata: ["handle": "\(facts.handle)"])
      case .closed(let facts, let reason) where facts.role == .peripheral:
        logger.info(
          "link to central \(facts.peer) closed",
          metadata: ["handle": "\(facts.handle)", "reason": "0x\(String(reason, radix: 16))"])
      default:
        break
      }
    }
  }

  public var descriptors: [Int32] {
    [connection.descriptor] + (inbox.dataSocket.map { [$0.rawValue] } ?? [])
      + (dataChannel?.descriptors ?? []) + (linkFacts?.descriptors ?? [])
  }

  public var nextDeadline: Duration? {
    [connection.pollTimeout.map { lastNow + $0 }, retryRegistrationAt, dataChannel?.acceptsResumeAt]
      .compactMap {
        $0
      }
      .min()
  }

  public func service(readable: Set<Int32>, now: Duration, value: CharacteristicValue)
    throws(LinkError)
    -> [PeripheralEvent]
  {
    lastNow = now
    inbox.now = now
    let dbusEvents = withoutActuallyEscaping(value) { provider in
      inbox.valueProvider = provider
      defer { inbox.valueProvider = nil }
      return connection.process()
    }
    for event in dbusEvents { try handle(event) }
    if let socket = inbox.dataSocket, readable.contains(socket.rawValue) { readData(socket) }
    if let linkFacts { logLinks(linkFacts.service(readable: readable)) }
    if let dataChannel {
      let central = inbox.device.flatMap { DataChannelRules.address(ofDevice: $0.rawValue) }
      inbox.events += dataChannel.service(readable: readable, central: central, now: now)
    }
    if let retry = retryRegistrationAt, now >= retry {
      retryRegistrationAt = nil
      do {
        try register()
      } catch {
        logger.warning("registering with bluetoothd failed: \(error)")
        retryRegistrationAt = now + .seconds(2)
      }
    }
    defer { inbox.events.removeAll() }
    return inbox.events
  }

  private func handle(_ event: DBusEvent) throws(LinkError) {
    switch event {
    case .reply(let serial, let result):
      guard let what = pending.removeValue(forKey: serial) else { return }
      switch result {
      case .success:
        logger.info("\(what) accepted by bluetoothd")
        if what == "RegisterAdvertisement" { advertisingSince = lastNow }
        if what == "RegisterApplication" { applicationRegistered = true }
      case .failure(let error) where error.name == "org.bluez.Error.AlreadyExists":
        logger.debug("\(what): already registered")
      case .failure(let error):
        logger.warning("\(what) failed: \(error.name): \(error.message); trying again shortly")
        retryRegistrationAt = lastNow + .seconds(2)
      }
    case .signal(let signal):
      handle(signal)
    case .disconnected:
      throw .protocolViolation("the system bus connection was lost")
    }
  }

  private func handle(_ signal: DBusSignal) {
    if signal.member == "NameOwnerChanged", signal.arguments.count == 3,
      signal.arguments[0].stringValue == BlueZ.service, let newOwner = signal.arguments[2].stringValue
    {
      // bluetoothd went away (its registrations with it) or came back: register anew.
      applicationRegistered = false
      advertisingSince = nil
      if inbox.device != nil { inbox.events.append(.disconnected) }
      inbox.forgetCentral()
      for central in inbox.smpCentrals.keys.sorted() { inbox.forgetSMPCentral(central) }
      for central in Set(inbox.nordicDFUCentrals.values.joined()) { inbox.forgetNordicDFUCentral(central) }
      if !newOwner.isEmpty {
        logger.notice("bluetoothd restarted: registering again")
        retryRegistrationAt = lastNow + .milliseconds(200)
      }
      return
    }
    guard signal.member == "PropertiesChanged", signal.arguments.count >= 2,
      let interface = signal.arguments[0].stringValue, let changed = try? signal.arguments[1].vardict()
    else { return }
    if interface == BlueZ.device, changed["Connected"]?.boolValue == false {
      inbox.forgetSMPCentral(signal.path)
      inbox.forgetNordicDFUCentral(signal.path)
      guard signal.path == inbox.device else { return }
      logger.info("central disconnected", metadata: ["device": "\(signal.path)"])
      inbox.forgetCentral()
      inbox.events.append(.disconnected)
    } else if interface == BlueZ.adapter, changed["Powered"]?.boolValue == true {
      // After a power cycle bluetoothd 5.66 still lists the advertisement (AlreadyExists) but no
      // longer sends it: withdraw it, then register it again.
      logger.notice("adapter powered on: advertising again")
      _ = try? connection.startCall(
        destination: BlueZ.service, path: BlueZ.adapterPath(options.adapter),
        interface: BlueZ.advertisingManager, method: "UnregisterAdvertisement",
        arguments: [.objectPath(application.advertisement)])
      retryRegistrationAt = lastNow + .milliseconds(200)
    }
  }

  /// The most data packets read in one turn of the loop: a central writing without pause cannot
  /// keep the loop from its other descriptors (the socket stays readable for the next turn).
  static let packetsPerTurn = 64
  /// The most bytes queued for the bus before notifications are dropped instead of queued (a bus
  /// that stopped reading would otherwise grow the queue without end).
  static let outgoingLimit = 1 << 20

  /// Reads the packets waiting on the AcquireWrite socket (one per ATT write), up to
  /// `packetsPerTurn`.
  private func readData(_ socket: FileDescriptor) {
    var buffer = [UInt8](repeating: 0, count: 1024)
    var packets = 0
    defer { if packets > 0 { logger.trace("data packets read", metadata: ["count": "\(packets)"]) } }
    while packets < Self.packetsPerTurn {
      let received = socket.receiveNow(into: &buffer)
      switch received {
      case .success(nil):
        return
      case .success(let count?) where count > 0:
        packets += 1
        inbox.otaLastWrite = lastNow
        inbox.events.append(.dataWrite(Array(buffer[0..<count])))
      case .success:
        // bluetoothd closed its end: the central went away or the link is being renegotiated.
        logger.debug("the data socket closed")
        inbox.closeDataSocket()
        return
      case .failure(let error):
        logger.debug("the data socket closed", metadata: ["error": "\(error)"])
        inbox.closeDataSocket()
        return
      }
    }
  }

  public func notify(_ bytes: [UInt8]) {
    guard inbox.notifying else { return }
    guard connection.outgoingBytes < Self.outgoingLimit else {
      logger.warning(
        "notification dropped: the system bus is not reading (\(connection.outgoingBytes) bytes wait)")
      return
    }
    do {
      try connection.setProperty(
        "Value", interface: BlueZ.gattCharacteristic, path: application.controlPoint, to: .bytes(bytes))
    } catch {
      logger.warning("notification not sent: \(error)")
    }
  }

  /// One SMP notification (PropertiesChanged on the SMP characteristic's Value; `setProperty` signals
  /// every time, so two equal pieces of an answer both go out). bluetoothd sends it to every central
  /// that subscribed: the D-Bus API has no notification to one central.
  public func notifySMP(_ bytes: [UInt8]) {
    guard application.smp, inbox.smpNotifying else { return }
    notifyValue(bytes, at: application.smpCharacteristic, "SMP")
  }

  /// One notification on a Nordic DFU control point.
  public func notifyNordicDFU(_ service: NordicDFUService, _ bytes: [UInt8]) {
    guard application.serves(service), inbox.nordicDFUNotifying.contains(service) else { return }
    notifyValue(bytes, at: application.controlPoint(of: service), service.rawValue)
  }

  /// A notification: PropertiesChanged on a characteristic's Value (`setProperty` signals every
  /// time, so two equal values both go out), unless the system bus is not reading.
  private func notifyValue(_ bytes: [UInt8], at path: DBusObjectPath, _ what: String) {
    guard connection.outgoingBytes < Self.outgoingLimit else {
      logger.warning("\(what) notification dropped: the system bus is not reading")
      return
    }
    do {
      try connection.setProperty("Value", interface: BlueZ.gattCharacteristic, path: path, to: .bytes(bytes))
    } catch {
      logger.warning("\(what) notification not sent: \(error)")
    }
  }

  /// Device1.Disconnect on `device`; the OTA central's own disconnect when it is that device (which
  /// then reports `.disconnected`).
  private func dropDevice(_ device: DBusObjectPath) {
    if device == inbox.device {
      disconnect()
      inbox.events.append(.disconnected)
    } else {
      _ = try? connection.startCall(
        destination: BlueZ.service, path: device, interface: BlueZ.device, method: "Disconnect")
      connection.flush(within: .milliseconds(500))
    }
  }

  /// Drops the central (before a restart, as a rebooting device would).
  public func disconnect() {
    dataChannel?.close()
    guard let device = inbox.device else { return }
    _ = try? connection.startCall(
      destination: BlueZ.service, path: device, interface: BlueZ.device, method: "Disconnect")
    connection.flush(within: .milliseconds(500))
    inbox.forgetCentral()
  }

  /// Drops the central at the device path `central` (an SMP central; the OTA one too when it is
  /// the same device, which then reports `.disconnected`).
  public func disconnect(central: String) {
    let path = DBusObjectPath(central)
    dropDevice(path)
    inbox.forgetSMPCentral(path)
    inbox.forgetNordicDFUCentral(path)
  }

  /// Unregisters the advertisement and the application (on a clean stop), waiting at most
  /// `timeout` for bluetoothd's answers: a stop must not hang on a bluetoothd that does not answer
  /// (it drops both anyway when otad's bus connection closes).
  public func unregister(within timeout: Duration = .milliseconds(500)) {
    let adapter = BlueZ.adapterPath(options.adapter)
    var waiting = Set<DBusSerial>()
    let calls: [(interface: String, method: String, object: DBusObjectPath)] = [
      (BlueZ.advertisingManager, "UnregisterAdvertisement", application.advertisement),
      (BlueZ.gattManager, "UnregisterApplication", options.root),
    ]
    for call in calls {
      if let serial = try? connection.startCall(
        destination: BlueZ.service, path: adapter, interface: call.interface, method: call.method,
        arguments: [.objectPath(call.object)], timeout: timeout)
      {
        waiting.insert(serial)
      }
    }
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !waiting.isEmpty, clock.now < deadline, connection.isConnected {
      let left = deadline - clock.now
      _ = try? Poller.wait(for: [connection.descriptor], timeout: min(left, connection.pollTimeout ?? left))
      for event in connection.process() {
        if case .reply(let serial, _) = event { waiting.remove(serial) }
      }
    }
  }
}
