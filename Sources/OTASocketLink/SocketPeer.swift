import OTALink
import OTAWire

/// One central on the simulated link, as the device sees it: its non-blocking socket, the bytes it
/// sent that are not a whole frame yet, the answers waiting for it to read, when it must have
/// said hello and when it was last heard.
final class SocketPeer {
  let socket: UnixSocket
  /// Who it is (pid and uid), for logs.
  let name: String
  /// By then it must have said hello.
  let helloDeadline: Duration
  var decoder = FrameDecoder()
  var handshaken = false
  /// When it last sent bytes, or when the loop first turned after the device answered it.
  var lastActive: Duration
  /// The device notified it since the loop's last turn.
  var answered = false
  var mtu = ATTMTU.minimum.value
  private var outgoing: OutgoingQueue

  init(socket: UnixSocket, limits: SocketPeripheral.Limits, now: Duration) {
    self.socket = socket
    name = socket.peer
    helloDeadline = now + limits.helloTimeout
    lastActive = now
    outgoing = OutgoingQueue(limit: limits.outgoingBytes)
  }

  var descriptor: Int32 { socket.descriptor }
  /// Answers wait for the socket to take them.
  var wantsToWrite: Bool { !outgoing.isEmpty }

  /// Queues `frame` behind what waits and writes what the socket takes now; throws
  /// `.peerNotReading` when the queue is full (the peer stopped reading).
  func send(_ frame: LinkFrame) throws(LinkError) {
    guard outgoing.append(frame.encoded) else { throw .peerNotReading(waiting: outgoing.count) }
    try flush()
  }

  /// Writes what waits, as far as the socket takes it.
  func flush() throws(LinkError) {
    while !outgoing.isEmpty {
      let written = try socket.writeAvailable(outgoing.pending)
      guard written > 0 else { return }
      outgoing.consume(written)
    }
  }

  func close() { socket.close() }
}
