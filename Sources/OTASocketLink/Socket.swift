import OTALink
import OTASystem

/// A Unix stream socket: the simulated link's wire, over OTASystem's owning `FileDescriptor`.
/// Closed explicitly (`close()`) or when released.
public final class UnixSocket {
  private let file: FileDescriptor
  public var descriptor: Int32 { file.rawValue }

  init(_ file: FileDescriptor) { self.file = file }

  public func close() { try? file.close() }

  /// Listens at `path`, replacing a stale socket file left by an earlier run. The listener does not
  /// block: take connections with `acceptWaiting()`.
  public static func listen(at path: String) throws(LinkError) -> UnixSocket {
    try link { () throws(SystemError) in
      let socket = try FileDescriptor.unixSocket()
      try? FileSystem.unlinkIfPresent(path)
      try socket.listen(at: path)
      try socket.makeNonBlocking()
      return UnixSocket(socket)
    }
  }

  /// Connects to the device listening at `path`.
  public static func connect(to path: String) throws(LinkError) -> UnixSocket {
    let socket = try link { () throws(SystemError) in try FileDescriptor.unixSocket() }
    do {
      try socket.connect(to: path)
    } catch  where error.errno == .noSuchFile || error.errno == .connectionRefused {
      throw .noDevice(path: path)
    } catch {
      throw LinkError(error)
    }
    return UnixSocket(socket)
  }

  /// Accepts a waiting connection on a non-blocking listener, as a non-blocking socket; nil when
  /// none waits any more (the client left between the poll and the accept).
  public func acceptWaiting() throws(LinkError) -> UnixSocket? {
    try Self.link { () throws(SystemError) in
      guard let client = try file.acceptWaiting() else { return nil }
      try client.makeNonBlocking()
      return UnixSocket(client)
    }
  }

  /// From now on reads and writes return at once instead of waiting.
  public func makeNonBlocking() throws(LinkError) {
    try Self.link { () throws(SystemError) in try file.makeNonBlocking() }
  }

  /// Who is on the other end (pid and uid, from SO_PEERCRED), for logs.
  public var peer: String {
    guard let credentials = file.peerCredentials else { return "fd \(descriptor)" }
    return "pid \(credentials.processID), uid \(credentials.userID)"
  }

  /// Reads what is there on a non-blocking socket: nil when nothing waits, empty when the peer closed.
  public func readAvailable(maximum: Int = 65536) throws(LinkError) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: maximum)
    let result = buffer.withUnsafeMutableBytes { raw in
      Result { () throws(SystemError) in try file.readSome(into: raw) }
    }
    switch result {
    case .success(nil): return nil
    case .success(let count?):
      buffer.removeLast(maximum - count)
      return buffer
    case .failure(let error) where error.errno == .connectionReset: return []
    case .failure(let error): throw LinkError(error)
    }
  }

  /// Writes what the socket takes now, without waiting: the number of bytes taken (0 when its
  /// buffer is full).
  public func writeAvailable(_ bytes: ArraySlice<UInt8>) throws(LinkError) -> Int {
    guard !bytes.isEmpty else { return 0 }
    let result = bytes.withUnsafeBytes { raw in
      Result { () throws(SystemError) in try file.send(raw, waiting: false) }
    }
    switch result {
    case .success(let count): return count ?? 0
    case .failure(let error) where error.errno == .brokenPipe || error.errno == .connectionReset:
      throw .disconnected
    case .failure(let error): throw LinkError(error)
    }
  }

  /// Reads what is there (the caller polled for it); an empty result means the peer closed.
  public func read(maximum: Int = 65536) throws(LinkError) -> [UInt8] {
    // Polled first, a blocking socket has something to read; "nothing waits" is an error here.
    guard let bytes = try readAvailable(maximum: maximum) else {
      throw .system(operation: "read", errno: .wouldBlock)
    }
    return bytes
  }

  /// Writes every byte, waiting as the socket drains.
  public func write(_ bytes: [UInt8]) throws(LinkError) {
    var offset = 0
    while offset < bytes.count {
      let result = bytes[offset...].withUnsafeBytes { raw in
        Result { () throws(SystemError) in try file.send(raw) }
      }
      switch result {
      case .success(let count?) where count > 0: offset += count
      case .success: throw .system(operation: "send", errno: .wouldBlock)
      case .failure(let error) where error.errno == .brokenPipe || error.errno == .connectionReset:
        throw .disconnected
      case .failure(let error): throw LinkError(error)
      }
    }
  }

  public func send(_ frame: LinkFrame) throws(LinkError) { try write(frame.encoded) }

  private static func link<T>(_ body: () throws(SystemError) -> T) throws(LinkError) -> T {
    do {
      return try body()
    } catch {
      throw LinkError(error)
    }
  }
}
