/// The device's end of the simulated link: listens on a Unix socket and serves one central at a
/// time as ATT would. Writes longer than MTU − 3 are refused (write requests with an ATT error,
/// write commands dropped); the device's own `--link` may lower the MTU and force a disconnect.
public final class SocketPeripheral: PeripheralLink {
  public let path: String
  public let conditions: LinkConditions
  private let listener: UnixSocket
  private var connection: UnixSocket?
  private var decoder = FrameDecoder()
  private var mtu = 23
  private var handshaken = false
  private var dataBytes = 0
  private var forcedDisconnectDone = false

  public init(path: String, conditions: LinkConditions) throws(LinkError) {
    self.path = path
    self.conditions = conditions
    listener = try UnixSocket.listen(at: path)
  }

  deinit { unlinkSocket() }

  /// Removes the socket file (the daemon is going away).
  public func unlinkSocket() {
    listener.close()
    _ = path.withCString { unlink($0) }
  }

  public var descriptors: [Int32] { [listener.descriptor] + (connection.map { [$0.descriptor] } ?? []) }
  public var nextDeadline: Duration? { nil }

  public func service(readable: Set<Int32>, now: Duration, value: CharacteristicValue)
    throws(LinkError)
    -> [PeripheralEvent]
  {
    var events: [PeripheralEvent] = []
    if readable.contains(listener.descriptor) {
      let client = try listener.accept()
      if connection != nil {
        try? client.send(.busy)
        client.close()
      } else {
        connection = client
        decoder = FrameDecoder()
        handshaken = false
      }
    }
    guard let connection, readable.contains(connection.descriptor) else { return events }
    let bytes = try connection.read()
    if bytes.isEmpty {
      drop(&events)
      return events
    }
    decoder.append(bytes)
    do {
      while let frame = try decoder.next() {
        try handle(frame, on: connection, value: value, &events)
        if self.connection == nil { break }
      }
    } catch {
      drop(&events)
    }
    return events
  }

  private func handle(
    _ frame: LinkFrame, on connection: UnixSocket, value: CharacteristicValue,
    _ events: inout [PeripheralEvent]
  ) throws(LinkError) {
    switch frame {
    case .hello(let wanted):
      mtu = max(23, min(Int(wanted), conditions.mtu))
      handshaken = true
      try connection.send(.welcome(mtu: UInt16(mtu)))
      events.append(.connected(mtu: mtu))
    case _ where !handshaken:
      throw .protocolViolation("frame before hello")
    case .writeRequest(let handle, let bytes):
      let status = writeStatus(handle: handle, length: bytes.count)
      try connection.send(.writeResponse(status: status))
      guard status == 0 else { return }
      events.append(handle == Characteristic.controlPoint.rawValue ? .controlWrite(bytes) : .dataWrite(bytes))
      countData(handle: handle, bytes.count, &events)
    case .writeCommand(let handle, let bytes):
      guard handle == Characteristic.data.rawValue, bytes.count <= mtu - 3 else { return }
      events.append(.dataWrite(bytes))
      countData(handle: handle, bytes.count, &events)
    case .readRequest(let handle, let offset):
      guard let characteristic = Characteristic(rawValue: handle),
        characteristic == .info || characteristic == .firmwareRevision
      else {
        try connection.send(.readResponse(status: ATTError.readNotPermitted.rawValue, value: []))
        return
      }
      let whole = value(characteristic, mtu)
      guard Int(offset) <= whole.count else {
        try connection.send(.readResponse(status: ATTError.invalidOffset.rawValue, value: []))
        return
      }
      let piece = whole[Int(offset)..<min(whole.count, Int(offset) + mtu - 1)]
      try connection.send(.readResponse(status: 0, value: Array(piece)))
    case .welcome, .busy, .writeResponse, .readResponse, .notification:
      throw .protocolViolation("a central sent \(frame)")
    }
  }

  private func writeStatus(handle: UInt8, length: Int) -> UInt8 {
    guard handle == Characteristic.controlPoint.rawValue || handle == Characteristic.data.rawValue else {
      return ATTError.writeNotPermitted.rawValue
    }
    return length <= mtu - 3 ? 0 : ATTError.invalidAttributeValueLength.rawValue
  }

  private func countData(handle: UInt8, _ count: Int, _ events: inout [PeripheralEvent]) {
    guard handle == Characteristic.data.rawValue, let limit = conditions.disconnectAfterBytes,
      !forcedDisconnectDone
    else { return }
    dataBytes += count
    if dataBytes >= limit {
      forcedDisconnectDone = true
      drop(&events)
    }
  }

  private func drop(_ events: inout [PeripheralEvent]) {
    guard connection != nil else { return }
    connection?.close()
    connection = nil
    handshaken = false
    events.append(.disconnected)
  }

  public func notify(_ bytes: [UInt8]) {
    guard let connection, handshaken else { return }
    do {
      try connection.send(.notification(handle: Characteristic.controlPoint.rawValue, value: bytes))
    } catch {
      // The central is gone; the next read sees the close.
    }
  }

  public func disconnect() {
    connection?.close()
    connection = nil
    handshaken = false
  }
}

#if canImport(Glibc)
  import Glibc
#endif
