import OTAFaults
import OTASystem

/// The fault control (`otad fault ...`, docs/APP-TESTING.md): a Unix socket in the state directory
/// that takes one line and answers it. Served from the daemon's poll loop without ever waiting: a
/// client has 2 s to send its line (at most `FaultControlCommand.maxLineLength` bytes), at most 4 are
/// served at once, and only root or the daemon's own user is heard (SO_PEERCRED).
final class FaultControlSocket {
  static let fileName = "faults.sock"
  static let maxClients = 4
  static let patience: Duration = .seconds(2)

  private struct Client {
    let socket: FileDescriptor
    var bytes: [UInt8]
    let deadline: Duration
  }

  let path: String
  private let listener: FileDescriptor
  private var clients: [Client] = []

  init(stateDirectory: String) throws(SystemError) {
    path = stateDirectory + "/" + Self.fileName
    let socket = try FileDescriptor.unixSocket()
    try FileSystem.unlinkIfPresent(path)
    try socket.listen(at: path)
    try socket.makeNonBlocking()
    listener = socket
  }

  /// The socket file goes with the daemon.
  func close() {
    try? listener.close()
    for client in clients { try? client.socket.close() }
    clients.removeAll()
    try? FileSystem.unlinkIfPresent(path)
  }

  var descriptors: [Int32] { [listener.rawValue] + clients.map(\.socket.rawValue) }

  var nextDeadline: Duration? { clients.map(\.deadline).min() }

  /// Accepts, reads and answers what is ready; `answer` carries out one line and says what to reply.
  /// Clients are read and let go before new ones are accepted: a loop that wakes late (a busy
  /// device) frees the places of clients whose time ran out before it turns a newcomer away.
  func serve(readable: Set<Int32>, now: Duration, answer: (String) -> String) {
    var kept: [Client] = []
    for var client in clients {
      if readable.contains(client.socket.rawValue) {
        switch receive(&client) {
        case .waiting: break
        case .line(let line):
          reply(client, answer(line))
          continue
        case .tooLong:
          reply(client, "error: a line of at most \(FaultControlCommand.maxLineLength) bytes")
          continue
        case .gone:
          try? client.socket.close()
          continue
        }
      }
      if now >= client.deadline {
        reply(client, "error: no command within \(Self.patience)")
        continue
      }
      kept.append(client)
    }
    clients = kept
    if readable.contains(listener.rawValue) { accept(now: now) }
  }

  private func accept(now: Duration) {
    while let socket = try? listener.acceptWaiting() {
      let allowed = socket.peerCredentials.map {
        $0.userID == 0 || $0.userID == ProcessEnvironment.effectiveUserID
      }
      guard allowed == true, clients.count < Self.maxClients, (try? socket.makeNonBlocking()) != nil else {
        _ = try? [UInt8]("error: not now, or not for this user\n".utf8).withUnsafeBytes {
          try socket.send($0, waiting: false)
        }
        try? socket.close()
        continue
      }
      clients.append(Client(socket: socket, bytes: [], deadline: now + Self.patience))
    }
  }

  private enum Received {
    case waiting
    case line(String)
    case tooLong
    case gone
  }

  private func receive(_ client: inout Client) -> Received {
    var buffer = [UInt8](repeating: 0, count: FaultControlCommand.maxLineLength + 1)
    let got: Int?
    do {
      got = try buffer.withUnsafeMutableBytes { try client.socket.receive(into: $0, waiting: false) }
    } catch {
      return client.bytes.isEmpty ? .gone : line(client.bytes)
    }
    guard let got else { return .waiting }
    guard got > 0 else {
      // Closed: a line without its newline still counts once the client is done.
      return client.bytes.isEmpty ? .gone : line(client.bytes)
    }
    client.bytes += buffer[..<got]
    if let newline = client.bytes.firstIndex(of: UInt8(ascii: "\n")) {
      return line(Array(client.bytes[..<newline]))
    }
    return client.bytes.count > FaultControlCommand.maxLineLength ? .tooLong : .waiting
  }

  private func line(_ bytes: [UInt8]) -> Received {
    guard bytes.count <= FaultControlCommand.maxLineLength,
      let text = String(validating: bytes, as: UTF8.self)
    else { return .tooLong }
    return .line(text)
  }

  /// The answer and a newline, without waiting (a small answer fits an empty socket's buffer), then
  /// the client is closed: it reads until the end.
  private func reply(_ client: Client, _ text: String) {
    _ = try? Array((text + "\n").utf8).withUnsafeBytes { try client.socket.send($0, waiting: false) }
    try? client.socket.close()
  }
}
