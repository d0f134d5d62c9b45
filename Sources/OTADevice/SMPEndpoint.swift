import OTASMP
import OTAStorage
import OTASystem

/// SMP over UDP: one bound socket, each datagram one SMP message, each answer sent back to its
/// sender. Clients are not told apart (UDP has no connection): one upload at a time, whoever sends it.
public struct SMPEndpoint: Sendable {
  public let socket: UDPSocket
  public var device: SMPDevice
  /// When the last upload chunk arrived: an OTA PREPARE is refused "busy" for a while after.
  public private(set) var lastUpload: Duration?

  public init(socket: UDPSocket, device: SMPDevice = SMPDevice()) {
    self.socket = socket
    self.device = device
  }

  /// What serving the waiting datagrams led to.
  public struct Served: Sendable {
    public var restart = false
    /// One line per message worth logging.
    public var notes: [String] = []
  }

  /// Answers every datagram waiting now (at most `limit`, so the link is not starved).
  public mutating func serve(host: inout ReceiverHost, otaBusy: Bool, now: Duration, limit: Int = 64) throws
    -> Served
  {
    var served = Served()
    let maxLength = device.server.configuration.bufferSize
    for _ in 0..<limit {
      guard let datagram = try socket.receive(maxLength: maxLength) else { break }
      if datagram.bytes.count >= SMPHeader.byteCount, datagram.bytes[4] == 0, datagram.bytes[5] == 1,
        datagram.bytes[7] == 1
      {
        lastUpload = now
      }
      if datagram.truncated {
        if case .respond(let answer) = device.server.refuseTooLarge(datagram.bytes) {
          try socket.send(answer, to: datagram.from)
        }
        served.notes.append("\(datagram.from): a datagram over \(maxLength) bytes refused")
        continue
      }
      let output = try device.handle(datagram.bytes, host: &host, otaBusy: otaBusy)
      if let note = output.note { served.notes.append("\(datagram.from): \(note)") }
      if let response = output.response { try socket.send(response, to: datagram.from) }
      if output.restart {
        served.restart = true
        break
      }
    }
    return served
  }

  /// True while an SMP upload is under way: begun, not finished, a chunk within `quiet`.
  public func uploading(now: Duration, quiet: Duration = .seconds(30)) -> Bool {
    guard device.received != nil, let lastUpload else { return false }
    return now - lastUpload < quiet
  }
}
