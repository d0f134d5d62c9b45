import OTALink
import OTASystem
import OTAWire

/// The device's end of the simulated link: listens on a Unix socket and serves one central at a
/// time as ATT would. Writes longer than MTU − 3 are refused (write requests with an ATT error,
/// write commands dropped); the device's own `--link` may lower the MTU and force a disconnect.
///
/// No client can hold or stall it: a connection that sends no hello within `Limits.helloTimeout`,
/// or nothing for `Limits.idleTimeout` after it, is closed, and every write is non-blocking, so answers a central does not read wait in a queue
/// of at most `Limits.outgoingBytes`, past which that central is dropped.
public final class SocketPeripheral: PeripheralLink {
  /// What one client may cost the device before it is dropped.
  public struct Limits: Sendable, Equatable {
    /// How long a new connection may stay silent before its hello.
    public var helloTimeout: Duration
    /// How long a central may send nothing after its hello, counted from what it last sent or
    /// the device last answered (a central waiting on a long VALIDATE is not silent).
    public var idleTimeout: Duration
    /// How many bytes of answers may wait for a central that does not read them (beyond what its
    /// socket buffers).
    public var outgoingBytes: Int

    public init(
      helloTimeout: Duration = .seconds(3), idleTimeout: Duration = .seconds(30),
      outgoingBytes: Int = 64 * 1024
    ) {
      self.helloTimeout = helloTimeout
      self.idleTimeout = idleTimeout
      self.outgoingBytes = outgoingBytes
    }
  }

  public let path: String
  public let conditions: LinkConditions
  public let limits: Limits
  private let listener: UnixSocket
  private var connection: SocketPeer?
  /// Events from a drop outside `service` (a notification that found the queue full).
  private var pendingEvents: [PeripheralEvent] = []
  private var dataBytes = 0
  private var forcedDisconnectDone = false
  /// The characteristics a central may read; the others answer "read not permitted", as ATT does
  /// for a handle the device lacks. All of them by default; fewer stand for an older otad (one
  /// from before the identity strings, say).
  public var readable: Set<Characteristic> = SocketPeripheral.readableCharacteristics

  /// Every characteristic that can be read: Info, the Device Information Service's strings and the
  /// block hashes.
  public static let readableCharacteristics: Set<Characteristic> = [
    .info, .firmwareRevision, .blockHashes, .modelNumber, .serialNumber, .hardwareRevision,
  ]

  public init(path: String, conditions: LinkConditions, limits: Limits = Limits()) throws(LinkError) {
    self.path = path
    self.conditions = conditions
    self.limits = limits
    listener = try UnixSocket.listen(at: path)
  }

  deinit { unlinkSocket() }

  /// Removes the socket file (the daemon is going away).
  public func unlinkSocket() {
    listener.close()
    try? FileSystem.unlinkIfPresent(path)
  }

  /// When a failed accept paused the listener, when it listens again (a failing accept leaves the
  /// listener readable: polling it at once would spin).
  private var acceptsResumeAt: Duration?
  /// How long a failed accept pauses the listener.
  static let acceptPause = Duration.seconds(1)

  public var descriptors: [Int32] {
    (acceptsResumeAt == nil ? [listener.descriptor] : []) + (connection.map { [$0.descriptor] } ?? [])
  }
  public var writeDescriptors: [Int32] {
    guard let connection, connection.wantsToWrite else { return [] }
    return [connection.descriptor]
  }
  public var nextDeadline: Duration? {
    if !pendingEvents.isEmpty { return .zero }
    let connectionDue = connection.map {
      $0.handshaken ? $0.lastActive + limits.idleTimeout : $0.helloDeadline
    }
    return [connectionDue, acceptsResumeAt].compactMap { $0 }.min()
  }

  public func service(readable: Set<Int32>, now: Duration, value: CharacteristicValue)
    throws(LinkError)
    -> [PeripheralEvent]
  {
    var events = pendingEvents
    pendingEvents.removeAll()
    if let resume = acceptsResumeAt, now >= resume { acceptsResumeAt = nil }
    let accepted = readable.contains(listener.descriptor) ? accept(now: now, &events) : false
    guard let connection else { return events }
    // The device answered since the last turn: the central's silence counts from now.
    if connection.answered {
      connection.answered = false
      connection.lastActive = now
    }
    // A new connection's hello may be there already.
    if accepted || readable.contains(connection.descriptor) {
      receive(on: connection, now: now, value: value, &events)
    }
    // Read first: a hello (or a request) that waited while the loop was busy still counts.
    guard self.connection === connection else { return events }
    if !connection.handshaken, now >= connection.helloDeadline {
      drop("sent no hello within \(limits.helloTimeout)", &events)
    } else if connection.handshaken, now >= connection.lastActive + limits.idleTimeout {
      drop("sent nothing for \(limits.idleTimeout)", &events)
    }
    return events
  }

  /// Writes what waits for the central, reads what it sent and handles each whole frame; drops it
  /// when it closed or broke a rule.
  private func receive(
    on connection: SocketPeer, now: Duration, value: CharacteristicValue,
    _ events: inout [PeripheralEvent]
  ) {
    do throws(LinkError) {
      try connection.flush()
      guard let count = try connection.socket.readAvailable(into: &connection.decoder) else { return }
      if count == 0 {
        drop(nil, &events)
        return
      }
      connection.lastActive = now
      while let frame = try connection.decoder.next() {
        try handle(frame, on: connection, value: value, &events)
        if self.connection !== connection { break }
      }
    } catch {
      drop("\(error)", &events)
    }
  }

  /// Takes the waiting connections: the first when none is served, the others told "busy". True
  /// when one is now served. An accept that fails (a client gone before it was taken, otad out of
  /// descriptors) is that client's loss: reported as a dropped peer, and the listener rests for
  /// `acceptPause`, never thrown out of the loop.
  private func accept(now: Duration, _ events: inout [PeripheralEvent]) -> Bool {
    var accepted = false
    for _ in 0..<8 {
      let client: UnixSocket
      do {
        guard let waiting = try listener.acceptWaiting() else { break }
        client = waiting
      } catch {
        acceptsResumeAt = now + Self.acceptPause
        events.append(.droppedPeer("accept failed: \(error); accepting again in \(Self.acceptPause)"))
        break
      }
      if connection != nil {
        _ = try? client.writeAvailable(LinkFrame.busy.encoded[...])
        client.close()
      } else {
        connection = SocketPeer(socket: client, limits: limits, now: now)
        accepted = true
      }
    }
    return accepted
  }

  private func handle(
    _ frame: LinkFrame, on connection: SocketPeer, value: CharacteristicValue,
    _ events: inout [PeripheralEvent]
  ) throws(LinkError) {
    switch frame {
    case .hello(let wanted):
      let mtu = ATTMTU(clamping: min(Int(wanted), conditions.mtu))
      connection.mtu = mtu.value
      connection.handshaken = true
      try connection.send(.welcome(mtu: UInt16(mtu.value)))
      events.append(.connected(mtu: mtu))
    case _ where !connection.handshaken:
      throw .protocolViolation("frame before hello")
    case .writeRequest(let handle, let bytes):
      let status = writeStatus(handle: handle, length: bytes.count, mtu: connection.mtu)
      try connection.send(.writeResponse(status: status))
      guard status == 0 else { return }
      events.append(handle == Characteristic.controlPoint.rawValue ? .controlWrite(bytes) : .dataWrite(bytes))
      countData(handle: handle, bytes.count, &events)
    case .writeCommand(let handle, let bytes):
      guard handle == Characteristic.data.rawValue,
        bytes.count <= ATTMTU(clamping: connection.mtu).maxWriteValue
      else { return }
      events.append(.dataWrite(bytes))
      countData(handle: handle, bytes.count, &events)
    case .sdu(let bytes):
      // The channel's rule (docs/PROTOCOL.md): more than the 4-byte offset, at most the receive MTU.
      guard bytes.count > DataChunk.headerSize, bytes.count <= ChannelShape.deviceReceiveMTU else { return }
      events.append(.dataWrite(bytes))
      countData(handle: Characteristic.data.rawValue, bytes.count, &events)
    case .readRequest(let handle, let offset):
      guard let characteristic = Characteristic(rawValue: handle), readable.contains(characteristic) else {
        try connection.send(.readResponse(status: ATTError.readNotPermitted.rawValue, value: []))
        return
      }
      let whole = value(characteristic, ATTMTU(clamping: connection.mtu))
      guard Int(offset) <= whole.count else {
        try connection.send(.readResponse(status: ATTError.invalidOffset.rawValue, value: []))
        return
      }
      let piece = whole[Int(offset)..<min(whole.count, Int(offset) + connection.mtu - 1)]
      try connection.send(.readResponse(status: 0, value: Array(piece)))
    case .welcome, .busy, .writeResponse, .readResponse, .notification:
      throw .protocolViolation("a central sent \(frame)")
    }
  }

  private func writeStatus(handle: UInt8, length: Int, mtu: Int) -> UInt8 {
    guard handle == Characteristic.controlPoint.rawValue || handle == Characteristic.data.rawValue else {
      return ATTError.writeNotPermitted.rawValue
    }
    return length <= ATTMTU(clamping: mtu).maxWriteValue ? 0 : ATTError.invalidAttributeValueLength.rawValue
  }

  private func countData(handle: UInt8, _ count: Int, _ events: inout [PeripheralEvent]) {
    guard handle == Characteristic.data.rawValue, let limit = conditions.disconnectAfterBytes,
      !forcedDisconnectDone
    else { return }
    dataBytes += count
    if dataBytes >= limit {
      forcedDisconnectDone = true
      drop(nil, &events)
    }
  }

  /// Closes the connection; `reason` (for the log) when the link drops it for breaking a rule.
  private func drop(_ reason: String?, _ events: inout [PeripheralEvent]) {
    guard let connection else { return }
    connection.close()
    self.connection = nil
    if let reason { events.append(.droppedPeer("\(connection.name): \(reason)")) }
    if connection.handshaken { events.append(.disconnected) }
  }

  public func notify(_ bytes: [UInt8]) {
    guard let connection, connection.handshaken else { return }
    do throws(LinkError) {
      try connection.send(.notification(handle: Characteristic.controlPoint.rawValue, value: bytes))
      connection.answered = true
    } catch {
      drop("\(error)", &pendingEvents)
    }
  }

  public func disconnect() {
    connection?.close()
    connection = nil
  }
}
