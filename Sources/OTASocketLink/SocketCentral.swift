import OTALink
import OTASystem
import OTAWire

/// The central's end of the simulated link, where the air is modelled (`AirTime`,
/// `ConnectionEvent`). Writes wait in a queue and leave only at connection events, one link-layer
/// packet per exchange, as many exchanges as fit whole in the event's length and the controller's
/// packet limit; a write reaches the device when its last packet has gone. The device's answers
/// (notifications, write and read responses) come back the same way, in the peripheral's packets
/// of the exchanges (an empty PDU when it has nothing to say), and count only once they have
/// crossed. The data queue's free space, a write counting until its last packet has gone, is the
/// sender's flow-control credit. ATT requests (control-point writes, reads) go one at a time, each
/// after the previous one's response. Loss, duplication, reordering, bit flips and disconnects
/// apply as `LinkConditions` says. With a channel (`LinkConditions.channel`) data goes in SDUs
/// instead, one data write each, cut into K-frames under the channel's credit flow
/// (`ChannelShape`); the channel opens after the first Info read of a connection, as over BlueZ.
///
/// Centrals given one `SharedRadio` share its air, as one central's links do: while connected
/// each takes part in the radio's plan, its events in its own slot of the radio's interval.
/// Without one a central has the air to itself.
public final class SocketCentral: CentralLink {
  enum Request: Equatable {
    case write([UInt8])
    case read(Characteristic, offset: Int)
  }

  /// What the central's packets carry: an ATT request or a data write.
  enum Uplink {
    case request(Request)
    case data([UInt8])
    /// One K-frame of an SDU; the last carries the SDU.
    case kFrame(sdu: [UInt8]?)
  }

  public let path: String
  public let conditions: LinkConditions
  let air: AirTime
  /// The radio this central shares with others; nil: a radio of its own.
  public let radio: SharedRadio?
  /// Whether this central takes part in the radio's plan now (from the device's welcome to the
  /// connection's end).
  private var onRadio = false
  private var random: SeededGenerator
  private var socket: UnixSocket?
  private var decoder = FrameDecoder()
  private var mtu = ATTMTU.minimum.value
  private var connected = false
  /// When the hello went out and its answer has not come yet: a peer that accepts the connection
  /// and never answers (a forwarder whose far end is down, as socat over qemu's user network while
  /// the guest reboots) is given up after `helloPatience`, so the central tries again.
  private var helloSentAt: Duration?
  public static let helloPatience: Duration = .seconds(5)
  private var pendingEvents: [CentralEvent] = []
  private var requests: [Request] = []
  private var requestInFlight: Request?
  private var dataQueue: [[UInt8]] = []
  /// The L2CAP frame going out now, packet by packet.
  private var uplink: FragmentQueue<Uplink>
  /// The device's answers on their way back, packet by packet.
  private var downlink: FragmentQueue<LinkFrame>
  /// The long read under way, so far.
  private var readValue: [UInt8] = []
  /// The identity read so far, and the characteristics whose reads have not ended yet, while
  /// `readIdentity`'s reads are under way.
  private var identityRead: (identity: DeviceIdentity, left: Set<Characteristic>)?
  private var nextEvent: Duration = .zero
  /// On a shared radio: the plan's generation this link's next event was set in, the end of its
  /// last event (or when it joined).
  private var radioGeneration = -1
  private var lastEventEnd: Duration = .zero
  /// Whether this link has had an event since it joined the radio: the first keeps the slot the
  /// plan gave the new link (one that talks: a connection opens with requests, never data; its
  /// first event often runs before its central has queued anything), the need is told from the
  /// second on.
  private var eventOnRadio = false
  private var dataBytesSent = 0
  private var forcedDisconnectDone = false
  /// The channel's credit flow, once it is open on this connection.
  private var channel: ChannelSender?
  /// The SDU being cut into K-frames and the lengths of those not yet on the uplink.
  private var channelSDU: (sdu: [UInt8], frames: [Int])?
  /// Statistics for reports and benchmarks.
  public private(set) var connectionEvents = 0
  public private(set) var dataPacketsLost = 0

  public init(path: String, conditions: LinkConditions, radio: SharedRadio? = nil) {
    self.path = path
    self.conditions = conditions
    self.radio = radio
    air = AirTime(conditions)
    uplink = FragmentQueue(dataLength: conditions.dataLength)
    downlink = FragmentQueue(dataLength: conditions.dataLength)
    random = SeededGenerator(seed: conditions.seed)
  }

  deinit { leaveRadio() }

  public var descriptors: [Int32] { socket.map { [$0.descriptor] } ?? [] }
  public var nextDeadline: Duration? {
    if !pendingEvents.isEmpty { return .zero }
    if let helloSentAt { return helloSentAt + Self.helloPatience }
    guard connected else { return nil }
    followPlan()
    return nextEvent
  }

  public func connect(now: Duration) {
    reset()
    nextEvent = now
    let socket: UnixSocket
    do {
      socket = try UnixSocket.connect(to: path)
    } catch {
      pendingEvents.append(.connectFailed(error.description))
      return
    }
    do {
      try socket.send(.hello(mtu: UInt16(conditions.mtu)))
      self.socket = socket
      helloSentAt = now
    } catch {
      // A device busy with another central answers busy and closes at once, often before the
      // hello is out: its answer still waits to be read.
      pendingEvents.append(
        error == .disconnected ? Self.refusal(on: socket) : .connectFailed(error.description))
      socket.close()
    }
  }

  /// Why a device closed a connection before the hello went out: busy if it said so.
  private static func refusal(on socket: UnixSocket) -> CentralEvent {
    var decoder = FrameDecoder()
    // The device has closed its end: what it sent is all in the socket's buffer, and the
    // non-blocking reads take it up to the end (0) or to nothing more (nil).
    while let count = try? socket.readAvailable(into: &decoder), count > 0 {}
    if case .busy? = try? decoder.next() { return .deviceBusy }
    return .connectFailed(LinkError.disconnected.description)
  }

  public func service(readable: Set<Int32>, now: Duration) -> [CentralEvent] {
    var events = pendingEvents
    pendingEvents.removeAll()
    if let socket, readable.contains(socket.descriptor) { receive(from: socket, &events) }
    if let sent = helloSentAt, !connected, socket != nil, now >= sent + Self.helloPatience {
      reset()
      events.append(
        .connectFailed("the device accepted the connection but did not answer within \(Self.helloPatience)"))
    }
    if connected, now >= nextEvent {
      connectionEvent(now: now, &events)
    }
    return events
  }

  public func writeControl(_ bytes: [UInt8]) { if connected { requests.append(.write(bytes)) } }
  public func writeData(_ bytes: [UInt8]) { if connected { dataQueue.append(bytes) } }

  public func readInfo() {
    guard connected else { return }
    requests.append(.read(.info, offset: 0))
  }

  public func readBlockHashes() {
    guard connected else { return }
    requests.append(.read(.blockHashes, offset: 0))
  }

  /// Reads the three identity strings one after the other (long reads, as any); a device that
  /// lacks one answers "read not permitted" and that field stays nil.
  public func readIdentity() {
    guard connected, identityRead == nil else { return }
    identityRead = (DeviceIdentity(), Set(Characteristic.identity))
    for characteristic in Characteristic.identity { requests.append(.read(characteristic, offset: 0)) }
  }

  public func disconnect() {
    let was = socket != nil
    reset()
    if was { pendingEvents.append(.disconnected("the central disconnected")) }
  }

  private func reset() {
    leaveRadio()
    socket?.close()
    socket = nil
    connected = false
    helloSentAt = nil
    decoder = FrameDecoder()
    requests.removeAll()
    requestInFlight = nil
    readValue = []
    identityRead = nil
    dataQueue.removeAll()
    uplink.removeAll()
    downlink.removeAll()
    channel = nil
    channelSDU = nil
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
      while let frame = try decoder.next() { arrive(frame, &events) }
    } catch {
      lose(error.description, &events)
    }
  }

  /// A frame from the device: the connection's setup at once, the device's ATT answers onto the
  /// air, to be handled when their last packet has crossed.
  private func arrive(_ frame: LinkFrame, _ events: inout [CentralEvent]) {
    switch frame {
    case .writeResponse: downlink.append(frame, frameLength: 1 + 4)
    case .readResponse(_, let value): downlink.append(frame, frameLength: 1 + value.count + 4)
    case .notification(_, let value): downlink.append(frame, frameLength: ATTMTU.headerSize + value.count + 4)
    default: handle(frame, &events)
    }
  }

  private func handle(_ frame: LinkFrame, _ events: inout [CentralEvent]) {
    switch frame {
    case .welcome(let mtu):
      self.mtu = Int(mtu)
      connected = true
      helloSentAt = nil
      if let radio, !onRadio {
        // The first event was due when the central connected; on a shared radio, a talking
        // link's slot's.
        nextEvent = radio.join(ObjectIdentifier(self), air: air, at: nextEvent, need: .talking)
        radioGeneration = radio.generation
        lastEventEnd = nextEvent
        eventOnRadio = false
        onRadio = true
      }
      events.append(.connected(mtu: ATTMTU(clamping: self.mtu)))
      events.append(.writable(conditions.queueDepth))
    case .busy:
      reset()
      events.append(.deviceBusy)
    case .writeResponse(let status):
      requestInFlight = nil
      if status != 0 { events.append(.controlWriteFailed(status)) }
    case .readResponse(let status, let value):
      let characteristic: Characteristic =
        if case .read(let which, _) = requestInFlight { which } else { .info }
      requestInFlight = nil
      guard status == 0 else {
        if Characteristic.identity.contains(characteristic) {
          // An otad from before the identity strings: that one is unknown.
          readValue = []
          identityEnded(characteristic, nil, &events)
          return
        }
        if characteristic == .blockHashes {
          // A device without the characteristic: no hashes, the push goes on without them.
          readValue = []
          events.append(.blockHashes([]))
          return
        }
        lose("Info read failed with ATT error 0x\(String(status, radix: 16))", &events)
        return
      }
      readValue += value
      if value.count == mtu - 1 {
        requests.insert(.read(characteristic, offset: readValue.count), at: 0)
      } else {
        let whole = readValue
        readValue = []
        if characteristic == .info, channel == nil, let shape = conditions.channel {
          openChannel(shape, &events)
        }
        switch characteristic {
        case .blockHashes: events.append(.blockHashes(whole))
        case .serialNumber, .modelNumber, .hardwareRevision:
          identityEnded(characteristic, String(validating: whole, as: UTF8.self), &events)
        default: events.append(.info(whole))
        }
      }
    case .notification(_, let value):
      events.append(.notification(value))
    case .hello, .writeRequest, .writeCommand, .readRequest, .sdu:
      lose("the device sent \(frame)", &events)
    }
  }

  /// One of `readIdentity`'s reads ended: `.identity` once all three have.
  private func identityEnded(
    _ characteristic: Characteristic, _ value: String?, _ events: inout [CentralEvent]
  ) {
    guard var read = identityRead else { return }
    read.identity[characteristic] = value
    read.left.remove(characteristic)
    identityRead = read.left.isEmpty ? nil : read
    if read.left.isEmpty { events.append(.identity(read.identity)) }
  }

  /// The connection's end: the radio's other links share its air from their next events on.
  private func leaveRadio() {
    guard onRadio else { return }
    onRadio = false
    radio?.leave(ObjectIdentifier(self))
  }

  private func lose(_ reason: String, _ events: inout [CentralEvent]) {
    let wasConnected = connected
    reset()
    events.append(wasConnected ? .disconnected(reason) : .connectFailed(reason))
  }

  /// Opens the simulated channel: its credits granted, its SDU limit the sender's chunk size.
  private func openChannel(_ shape: ChannelShape, _ events: inout [CentralEvent]) {
    channel = ChannelSender(credits: air.channelCredits(shape))
    let parameters = L2CAPChannelParameters(
      sendMTU: shape.sdu, receiveMTU: shape.sdu, phy: conditions.phy.rawValue)
    events.append(.dataChannelOpened(DataChannelReport(psm: Self.simulatedPSM, parameters: parameters)))
  }

  /// The PSM the simulated channel reports (the first dynamic one).
  static let simulatedPSM: UInt16 = 0x80

  // MARK: Connection events

  /// On a shared radio whose plan changed since this link's next event was set: that event moves
  /// to the link's new slot, after its own last event and the last event on the radio.
  private func followPlan() {
    guard let radio, onRadio, radio.generation != radioGeneration else { return }
    radioGeneration = radio.generation
    let id = ObjectIdentifier(self)
    nextEvent = radio.slotStart(of: id, atOrAfter: max(lastEventEnd, radio.freeAt)) ?? nextEvent
  }

  /// What this link needs of the shared radio, from its queues at an event's start.
  private var need: RadioNeed {
    let data: Bool =
      switch uplink.head {
      case .data?, .kFrame?: true
      default: !dataQueue.isEmpty || channelSDU != nil
      }
    if data { return .sending }
    let talk = !requests.isEmpty || !uplink.isEmpty || !downlink.isEmpty || (channel?.returnable ?? 0) > 0
    return talk ? .talking : .waiting
  }

  /// Tells the radio this link's need at the start of an event at `start`; returns the air the
  /// event runs in: the smaller of its slot before the change and after it.
  private func tellRadio(_ radio: SharedRadio, _ id: ObjectIdentifier, at start: Duration) -> AirTime {
    let before = radio.air(of: id) ?? air
    let now = need
    defer { eventOnRadio = true }
    guard let planned = radio.need(of: id), now != planned else { return before }
    let old = before.slotMicroseconds ?? before.intervalMicroseconds
    radio.setNeed(
      now, of: id, slotAt: now > planned ? start + .nanoseconds(Int64((old * 1000).rounded(.up))) : start)
    return now > planned ? before : radio.air(of: id) ?? before
  }

  private func connectionEvent(now: Duration, _ events: inout [CentralEvent]) {
    let id = ObjectIdentifier(self)
    followPlan()
    if nextEvent > now { return }
    if let slot = radio?.slotStart(of: id, atOrAfter: nextEvent), slot != nextEvent {
      // Set before the radio's plan changed: this link's events are in its slot now.
      nextEvent = slot
      return
    }
    connectionEvents += 1
    let start = nextEvent
    let scheduled = radio?.nextEvent(of: id, after: nextEvent) ?? nextEvent + conditions.connectionInterval
    nextEvent = max(scheduled, now)
    if random.chance(conditions.disconnects) {
      lose("the link dropped (simulated)", &events)
      return
    }
    let creditBefore = credit
    var event = ConnectionEvent(link: radio.map { tellRadio($0, id, at: start) } ?? air)
    defer {
      if let radio, onRadio {
        radio.record(airMicroseconds: event.used, at: start)
        lastEventEnd = start + .nanoseconds(Int64((event.used * 1000).rounded(.up)))
        followPlan()
      }
    }
    channel?.newEvent()
    while connected {
      if uplink.isEmpty { startNextUplink() }
      let central = uplink.nextPacket ?? 0
      // The receiver's credits go in a packet of their own when it has nothing else to say.
      let credits = downlink.isEmpty && (channel?.returnable ?? 0) > 0
      let peripheral = credits ? ChannelShape.creditFrameLength : downlink.nextPacket ?? 0
      guard !uplink.isEmpty || !downlink.isEmpty || credits,
        event.fit(central: central, peripheral: peripheral)
      else {
        break
      }
      if let sent = uplink.sendPacket() { transmit(sent, &events) }
      if let answer = downlink.sendPacket() { handle(answer, &events) }
      if credits { channel?.creditsArrived() }
    }
    if connected, credit != creditBefore || creditBefore > 0 {
      events.append(.writable(credit))
    }
  }

  /// The sender's flow-control credit: the data queue's free places (a write holds its place until
  /// its last packet has gone).
  private var credit: Int {
    let going =
      switch uplink.head {
      case .data, .kFrame: 1
      default: channelSDU == nil ? 0 : 1
      }
    let depth = channel == nil ? conditions.queueDepth : min(conditions.queueDepth, Self.channelQueueDepth)
    return depth - dataQueue.count - going
  }

  /// SDUs that may wait for the channel, as over BlueZ (`BlueZCentralMachine`'s channel queue):
  /// a WINDOW goes out on the control point at once, so whatever waits behind it on the data path
  /// reaches the device that much later (16 SDUs are 64 KiB, a whole window).
  static let channelQueueDepth = 2

  /// Puts the next L2CAP frame on the uplink: the next ATT request if none waits for its response,
  /// else the next data write (now and then the one after it, when the link reorders).
  private func startNextUplink() {
    if requestInFlight == nil, !requests.isEmpty {
      let request = requests.removeFirst()
      requestInFlight = request
      switch request {
      case .write(let bytes):
        uplink.append(.request(request), frameLength: ATTMTU.headerSize + bytes.count + 4)
      case .read(_, let offset): uplink.append(.request(request), frameLength: (offset == 0 ? 3 : 5) + 4)
      }
    } else if channel != nil {
      startNextKFrame()
    } else if !dataQueue.isEmpty {
      var index = 0
      if dataQueue.count > 1, random.chance(conditions.reordering) { index = 1 }
      let packet = dataQueue.remove(at: index)
      uplink.append(.data(packet), frameLength: ATTMTU.headerSize + packet.count + 4)
    }
  }

  /// Puts the next K-frame of the SDU under way (or of the next data write) on the uplink, when the
  /// channel has a credit for it. SDUs go in order: the channel does not reorder.
  private func startNextKFrame() {
    guard var sender = channel, let shape = conditions.channel, sender.credits > 0 else { return }
    if channelSDU == nil, !dataQueue.isEmpty {
      let sdu = dataQueue.removeFirst()
      let frames = air.kFrames(sduLength: sdu.count, shape)
      channelSDU = (sdu, frames)
    }
    guard var current = channelSDU, !current.frames.isEmpty else { return }
    let length = current.frames.removeFirst()
    sender.credits -= 1
    channel = sender
    channelSDU = current.frames.isEmpty ? nil : current
    uplink.append(.kFrame(sdu: current.frames.isEmpty ? current.sdu : nil), frameLength: length)
  }

  /// A frame whose last packet has gone: the device gets it now.
  private func transmit(_ sent: Uplink, _ events: inout [CentralEvent]) {
    switch sent {
    case .data(let packet): transmitData(packet, &events)
    case .kFrame(let sdu):
      channel?.kFrameArrived(endsSDU: sdu != nil)
      if let sdu { transmitData(sdu, asSDU: true, &events) }
    case .request(let request):
      guard let socket else { return }
      do {
        switch request {
        case .write(let bytes):
          try socket.send(.writeRequest(handle: Characteristic.controlPoint.rawValue, value: bytes))
        case .read(let characteristic, let offset):
          try socket.send(.readRequest(handle: characteristic.rawValue, offset: UInt16(clamping: offset)))
        }
      } catch {
        lose(error.description, &events)
      }
    }
  }

  private func transmitData(_ packet: [UInt8], asSDU: Bool = false, _ events: inout [CentralEvent]) {
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
      let frame =
        asSDU
        ? LinkFrame.sdu(bytes) : LinkFrame.writeCommand(handle: Characteristic.data.rawValue, value: bytes)
      try socket.send(frame)
      if random.chance(conditions.duplication) { try socket.send(frame) }
    } catch {
      lose(error.description, &events)
    }
  }
}
