import OTASMP
import OTASystem

/// SMP over UDP: one bound socket, each datagram one SMP message, each answer sent back to its
/// sender. Clients are not told apart (UDP has no connection): one upload at a time, whoever sends
/// it. The answering is `SMPService`'s, the same for both transports; this only carries datagrams.
///
/// Nothing a peer sends ends the daemon: a receive or send that fails (a datagram from a port no
/// answer can reach, an ICMP error the kernel reports later, a full buffer) is that peer's loss,
/// handed to `dropped` for the log and the count, and serving goes on.
public struct SMPEndpoint: Sendable {
  public let socket: UDPSocket

  public init(socket: UDPSocket) {
    self.socket = socket
  }

  /// Hands every datagram waiting now (at most `limit`, so the link is not starved) to `answer`,
  /// which returns the answer to send (if any) and whether the device restarts. A datagram cut at
  /// `maxLength` goes to `refuse` instead. Returns true to stop (the device restarts).
  public func serve(
    maxLength: Int, limit: Int = 64, refuse: ([UInt8], UDPAddress) -> [UInt8]?,
    answer: ([UInt8], UDPAddress, _ reply: @escaping ([UInt8]) throws -> Void) throws -> Bool,
    dropped: (SystemError) -> Void
  ) rethrows -> Bool {
    for _ in 0..<limit {
      let datagram: (bytes: [UInt8], from: UDPAddress, truncated: Bool)
      do {
        guard let received = try socket.receive(maxLength: maxLength) else { break }
        datagram = received
      } catch {
        // A pending error on the socket (ICMP from an earlier answer's peer): it is reported once.
        dropped(error)
        continue
      }
      if datagram.truncated {
        if let refusal = refuse(datagram.bytes, datagram.from) { send(refusal, to: datagram.from, dropped) }
      } else if try answer(
        datagram.bytes, datagram.from, { [socket] in try socket.send($0, to: datagram.from) })
      {
        return true
      }
    }
    return false
  }

  /// One answer; a send that fails is the peer's loss (told to `dropped`), never the daemon's.
  public func send(_ bytes: [UInt8], to address: UDPAddress, _ dropped: (SystemError) -> Void) {
    do {
      try socket.send(bytes, to: address)
    } catch {
      dropped(error)
    }
  }
}
