import OTASMP
import OTASystem

/// SMP over UDP: one bound socket, each datagram one SMP message, each answer sent back to its
/// sender. Clients are not told apart (UDP has no connection): one upload at a time, whoever sends
/// it. The answering is `SMPService`'s, the same for both transports; this only carries datagrams.
public struct SMPEndpoint: Sendable {
  public let socket: UDPSocket

  public init(socket: UDPSocket) {
    self.socket = socket
  }

  /// Hands every datagram waiting now (at most `limit`, so the link is not starved) to `answer`
  /// and sends back what it returns. A datagram cut at `maxLength` goes to `refuse` instead.
  /// `answer` returns true to stop (the device restarts); so does `serve`.
  public func serve(
    maxLength: Int, limit: Int = 64, refuse: ([UInt8], UDPAddress) throws -> Void,
    answer: ([UInt8], UDPAddress) throws -> Bool
  ) throws -> Bool {
    for _ in 0..<limit {
      guard let datagram = try socket.receive(maxLength: maxLength) else { break }
      if datagram.truncated {
        try refuse(datagram.bytes, datagram.from)
      } else if try answer(datagram.bytes, datagram.from) {
        return true
      }
    }
    return false
  }
}
