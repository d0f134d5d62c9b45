import Logging
import OTALink
import OTASystem

/// The device's LE L2CAP channel for data: listens on a PSM, admits one channel from the central
/// connected on GATT, and turns each SDU (one offset-tagged chunk) into a `.dataWrite`, as the
/// data characteristic's socket does. Non-blocking throughout; reads are bounded per turn so a
/// flooding channel cannot keep the loop from its other work.
final class DataChannelListener {
  struct Options: Sendable {
    /// 0: a free dynamic PSM the kernel picks (0x80 to 0xFF).
    var psm: UInt16
    /// The least security a channel needs (BT_SECURITY), nil for none.
    var security: BluetoothSecurity?
  }

  /// The most SDUs read in one turn of the loop.
  static let sdusPerTurn = 64

  let listener: FileDescriptor
  let psm: UInt16
  private let logger: Logger
  private var channel: (socket: FileDescriptor, peer: BluetoothAddress)?
  /// SDUs dropped before the receiver (too short, too long) since the device started.
  private(set) var sdusDropped = 0
  /// When the listener is polled again after an accept failed (EMFILE, ENOBUFS: a listener that
  /// stays readable and cannot be accepted from would turn the loop, and its log, into a spin).
  private(set) var acceptsResumeAt: Duration?
  /// How long accepts pause after one failed.
  static let acceptPause: Duration = .seconds(1)
  /// The count when the open channel was admitted: its first drop is logged as a warning, the
  /// rest at debug (a flood of short SDUs must not flood the log), the count when it closes.
  private var droppedAtOpen = 0

  init(options: Options, logger: Logger) throws(SystemError) {
    self.logger = logger
    let socket = try FileDescriptor.l2capSocket(nonBlocking: true)
    if let level = options.security { try socket.setBluetoothSecurity(level) }
    // Bound first: the kernel takes BT_RCVMTU only on a socket it knows to be LE (EINVAL before).
    try socket.bindL2CAP(L2CAPEndpoint(address: .any, type: .lePublic, psm: options.psm))
    try socket.setReceiveMTU(DataChannelRules.receiveMTU)
    try socket.setReceiveBufferSize(DataChannelRules.receiveBuffer)
    try socket.listenL2CAP()
    listener = socket
    psm = socket.l2capLocalEndpoint?.psm ?? options.psm
  }

  /// A listener on a socket set up elsewhere (tests: a Unix socket stands in for the kernel's).
  init(listener: FileDescriptor, psm: UInt16, logger: Logger) {
    self.listener = listener
    self.psm = psm
    self.logger = logger
  }

  /// Takes `socket` as the open channel of `peer` (admitted by `DataChannelRules.admit`). An open
  /// channel costs a descriptor in the poll set and nothing else: no timer, no buffer of its own,
  /// and otad never sends on it, so there is no queue for a central that returns no credits to
  /// fill. It lasts as long as its central's GATT connection.
  func open(_ socket: FileDescriptor, peer: BluetoothAddress) {
    channel = (socket, peer)
    droppedAtOpen = sdusDropped
  }

  var descriptors: [Int32] {
    (acceptsResumeAt == nil ? [listener.rawValue] : []) + (channel.map { [$0.socket.rawValue] } ?? [])
  }

  var peer: BluetoothAddress? { channel?.peer }

  /// Accepts or refuses a waiting channel, reads what the open one sent; `central` is the central
  /// connected on GATT. A channel whose central left is closed.
  func service(readable: Set<Int32>, central: BluetoothAddress?, now: Duration) -> [PeripheralEvent] {
    if let open = channel, open.peer != central {
      logger.info("L2CAP channel closed: its central left", metadata: ["peer": "\(open.peer)"])
      close()
    }
    if let resume = acceptsResumeAt, now >= resume { acceptsResumeAt = nil }
    var events: [PeripheralEvent] = []
    if acceptsResumeAt == nil, readable.contains(listener.rawValue) {
      accept(central: central, now: now, &events)
    }
    if let open = channel, readable.contains(open.socket.rawValue) { read(open.socket, &events) }
    return events
  }

  func close() {
    guard let open = channel else { return }
    if sdusDropped - droppedAtOpen > 1 {
      logger.warning(
        "L2CAP channel closed after \(sdusDropped - droppedAtOpen) SDUs dropped",
        metadata: ["peer": "\(open.peer)"])
    }
    try? open.socket.close()
    channel = nil
  }

  private func accept(central: BluetoothAddress?, now: Duration, _ events: inout [PeripheralEvent]) {
    let accepted: (FileDescriptor, L2CAPEndpoint)?
    do {
      accepted = try listener.acceptL2CAP()
    } catch {
      acceptsResumeAt = now + Self.acceptPause
      logger.warning("L2CAP accept failed: \(error); accepting again in \(Self.acceptPause)")
      return
    }
    guard let (socket, endpoint) = accepted else { return }
    switch DataChannelRules.admit(peer: endpoint.address, central: central, open: channel?.peer) {
    case .accept:
      // The listener's buffer size is not always inherited: set it on the channel too.
      do {
        try socket.setReceiveBufferSize(DataChannelRules.receiveBuffer)
      } catch {
        logger.warning("L2CAP channel: \(error)")
      }
      let parameters = socket.l2capParameters
      logger.info(
        "L2CAP channel open",
        metadata: [
          "peer": "\(endpoint.address)", "psm": "0x\(String(psm, radix: 16))",
          "send-mtu": "\(parameters.sendMTU.map(String.init) ?? "?")",
          "receive-mtu": "\(parameters.receiveMTU.map(String.init) ?? "?")",
          "phy": "\(parameters.phy ?? "?")", "security": "\(parameters.security?.description ?? "?")",
        ])
      open(socket, peer: endpoint.address)
    case .refuse(let why):
      logger.warning("L2CAP channel refused: \(why)")
      try? socket.close()
      events.append(.droppedPeer("L2CAP channel from \(endpoint.address): \(why)"))
    }
  }

  private func read(_ socket: FileDescriptor, _ events: inout [PeripheralEvent]) {
    let limit = Int(DataChannelRules.receiveMTU)
    var buffer = [UInt8](repeating: 0, count: limit + 1)
    for _ in 0..<Self.sdusPerTurn {
      let received = socket.receiveNow(into: &buffer)
      switch received {
      case .success(nil):
        return
      case .success(let count?) where count > 0:
        switch DataChannelRules.judge(count: count, receiveMTU: limit) {
        case .chunk:
          events.append(.dataWrite(Array(buffer[0..<count])))
        case .drop(let why):
          sdusDropped += 1
          logger.log(
            level: sdusDropped - droppedAtOpen == 1 ? .warning : .debug, "L2CAP SDU dropped: \(why)",
            metadata: ["dropped": "\(sdusDropped)"])
        }
      case .success:
        logger.info("L2CAP channel closed by the central")
        close()
        return
      case .failure(let error):
        logger.info("L2CAP channel closed", metadata: ["error": "\(error)"])
        close()
        return
      }
    }
  }
}
