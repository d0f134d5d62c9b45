import OTALink
import OTAWire

/// The central's end of the simulated link, where the air is modelled. Writes wait in a queue and
/// leave only at connection events, as many as the event's link-layer packets and air time allow;
/// the data queue's free space is the sender's flow-control credit. ATT requests (control-point
/// writes, reads) go one at a time, each after the previous one's response. Notifications are
/// delivered at connection events. Loss, duplication, reordering, bit flips and disconnects apply
/// as `LinkConditions` says.
public final class SocketCentral: CentralLink {
  enum Request: Equatable {
    case write([UInt8])
    case read(offset: Int)
  }

  public let path: String
  public let conditions: LinkConditions
  let air: AirTime
  private var random: SeededGenerator
  private var socket: UnixSocket?
  private var decoder = FrameDecoder()
  private var mtu = ATTMTU.minimum.value
  private var connected = false
  private var pendingEvents: [CentralEvent] = []
  private var requests: [Request] = []
  private var requestInFlight: Request?
  private var dataQueue: [[UInt8]] = []
  private var notifications: [[UInt8]] = []
  private var infoValue: [UInt8] = []
  private var nextEvent: Duration = .zero
  /// Link-layer packets and air time left in the current connection event (may go negative: a
  /// write longer than one event borrows from the next).
  private var packetBudget = 0.0
  private var airBudget = 0.0
  private var dataBytesSent = 0
  private var forcedDisconnectDone = false
  /// Statistics for reports and benchmarks.
  public private(set) var connectionEvents = 0
  public private(set) var dataPacketsLost = 0

  public init(path: String, conditions: LinkConditions) {
    self.path = path
    self.conditions = conditions
    air = AirTime(conditions)
    random = SeededGenerator(seed: conditions.seed)
  }

  public var descriptors: [Int32] { socket.map { [$0.descriptor] } ?? [] }
  public var nextDeadline: Duration? {
    if !pendingEvents.isEmpty { return .zero }
    return connected ? nextEvent : nil
  }

  public func connect(now: Duration) {
    reset()
    do {
      let socket = try UnixSocket.connect(to: path)
      try socket.send(.hello(mtu: UInt16(conditions.mtu)))
      self.socket = socket
    } catch {
      pendingEvents.append(.connectFailed(error.description))
    }
    nextEvent = now
  }

  public func service(readable: Set<Int32>, now: Duration) -> [CentralEvent] {
    var events = pendingEvents
    pendingEvents.removeAll()
    if let socket, readable.contains(socket.descriptor) { receive(from: socket, &events) }
    if connected, now >= nextEvent {
      connectionEvent(now: now, &events)
    }
    return events
  }

  public func writeControl(_ bytes: [UInt8]) { if connected { requests.append(.write(bytes)) } }
  public func writeData(_ bytes: [UInt8]) { if connected { dataQueue.append(bytes) } }

  public func readInfo() {
    guard connected else { return }
    infoValue = []
    requests.append(.read(offset: 0))
  }

  public func disconnect() {
    let was = socket != nil
    reset()
    if was { pendingEvents.append(.disconnected("the central disconnected")) }
  }

  private func reset() {
    socket?.close()
    socket = nil
    connected = false
    decoder = FrameDecoder()
    requests.removeAll()
    requestInFlight = nil
    dataQueue.removeAll()
    notifications.removeAll()
  }

  // MARK: Receiving

  private func receive(from socket: UnixSocket, _ events: inout [CentralEvent]) {
    do throws(LinkError) {
      // Polled first, a blocking socket has something to read; "nothing waits" is an error here.
      guard let count = try socket.readAvailable(into: &decoder) else {
        throw .system(operation: "read", errno: .wouldBlock)
      }
      guard count > 0 else {
        lose("the device closed the link", &events)
        return
      }
      while let frame = try decoder.next() { handle(frame, &events) }
    } catch {
      lose(error.description, &events)
    }
  }

  private func handle(_ frame: LinkFrame, _ events: inout [CentralEvent]) {
    switch frame {
    case .welcome(let mtu):
      self.mtu = Int(mtu)
      connected = true
      events.append(.connected(mtu: self.mtu))
      events.append(.writable(conditions.queueDepth))
    case .busy:
      reset()
      events.append(.connectFailed(LinkError.deviceBusy.description))
    case .writeResponse(let status):
      requestInFlight = nil
      if status != 0 { events.append(.controlWriteFailed(status)) }
    case .readResponse(let status, let value):
      requestInFlight = nil
      guard status == 0 else {
        lose("Info read failed with ATT error 0x\(String(status, radix: 16))", &events)
        return
      }
      infoValue += value
      if value.count == mtu - 1 {
        requests.insert(.read(offset: infoValue.count), at: 0)
      } else {
        events.append(.info(infoValue))
      }
    case .notification(_, let value):
      notifications.append(value)
    case .hello, .writeRequest, .writeCommand, .readRequest:
      lose("the device sent \(frame)", &events)
    }
  }

  private func lose(_ reason: String, _ events: inout [CentralEvent]) {
    let wasConnected = connected
    reset()
    events.append(wasConnected ? .disconnected(reason) : .connectFailed(reason))
  }

  // MARK: Connection events

  private func connectionEvent(now: Duration, _ events: inout [CentralEvent]) {
    connectionEvents += 1
    nextEvent = max(nextEvent + conditions.connectionInterval, now)
    if random.chance(conditions.disconnects) {
      lose("the link dropped (simulated)", &events)
      return
    }
    packetBudget = min(packetBudget, 0) + Double(conditions.packetsPerEvent)
    airBudget = min(airBudget, 0) + air.intervalMicroseconds
    let creditBefore = conditions.queueDepth - dataQueue.count
    sendRequest(&events)
    while connected, !dataQueue.isEmpty, packetBudget > 0, airBudget > 0 || !conditions.airTimePacing {
      var index = 0
      if dataQueue.count > 1, random.chance(conditions.reordering) { index = 1 }
      let packet = dataQueue.remove(at: index)
      spend(on: packet.count)
      transmitData(packet, &events)
      if requestInFlight == nil { sendRequest(&events) }
    }
    for value in notifications { events.append(.notification(value)) }
    notifications.removeAll()
    if connected, conditions.queueDepth - dataQueue.count != creditBefore || creditBefore > 0 {
      events.append(.writable(conditions.queueDepth - dataQueue.count))
    }
  }

  /// Sends the next ATT request if none is waiting for its response and the event has room.
  private func sendRequest(_ events: inout [CentralEvent]) {
    guard connected, requestInFlight == nil, !requests.isEmpty, packetBudget > 0, let socket else { return }
    let request = requests.removeFirst()
    requestInFlight = request
    do {
      switch request {
      case .write(let bytes):
        spend(on: bytes.count)
        try socket.send(.writeRequest(handle: Characteristic.controlPoint.rawValue, value: bytes))
      case .read(let offset):
        spend(on: 3)
        try socket.send(.readRequest(handle: Characteristic.info.rawValue, offset: UInt16(offset)))
      }
    } catch {
      lose(error.description, &events)
    }
  }

  private func spend(on valueLength: Int) {
    let cost = air.cost(valueLength: valueLength)
    packetBudget -= Double(cost.packets)
    airBudget -= cost.microseconds
  }

  private func transmitData(_ packet: [UInt8], _ events: inout [CentralEvent]) {
    guard let socket else { return }
    if let limit = conditions.disconnectAfterBytes, !forcedDisconnectDone, dataBytesSent >= limit {
      forcedDisconnectDone = true
      lose("the link dropped after \(dataBytesSent) data bytes (simulated)", &events)
      return
    }
    dataBytesSent += packet.count
    if random.chance(conditions.loss) {
      dataPacketsLost += 1
      return
    }
    var bytes = packet
    if random.chance(conditions.bitFlips) {
      let bit = Int.random(in: 0..<(bytes.count * 8), using: &random)
      bytes[bit / 8] ^= 1 << UInt8(bit % 8)
    }
    do {
      let frame = LinkFrame.writeCommand(handle: Characteristic.data.rawValue, value: bytes)
      try socket.send(frame)
      if random.chance(conditions.duplication) { try socket.send(frame) }
    } catch {
      lose(error.description, &events)
    }
  }
}
