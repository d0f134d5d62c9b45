import OTALink
import OTASystem

/// A Unix stream socket: the simulated link's wire, over OTASystem's owning `FileDescriptor`.
/// Closed explicitly (`close()`) or when released.
public final class UnixSocket {
  private let file: FileDescriptor
  /// Where every read lands, allocated once: a read costs no allocation and no zero fill.
  private let scratch: UnsafeMutableRawBufferPointer
  public var descriptor: Int32 { file.rawValue }

  /// The most one read takes.
  public static let readCapacity = 65536

  init(_ file: FileDescriptor) {
    self.file = file
    scratch = .allocate(byteCount: Self.readCapacity, alignment: 16)
  }

  deinit { scratch.deallocate() }

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
  public func readAvailable(maximum: Int = readCapacity) throws(LinkError) -> [UInt8]? {
    try readAvailable(maximum: maximum) { Array($0) }
  }

  /// Reads what is there into the socket's own buffer and appends it to `decoder`, with no
  /// allocation of its own: the count read, 0 when the peer closed, nil when nothing waits.
  public func readAvailable(into decoder: inout FrameDecoder) throws(LinkError) -> Int? {
    try readAvailable(maximum: Self.readCapacity) { bytes in
      decoder.append(bytes)
      return bytes.count
    }
  }

  /// One non-blocking read into `scratch`; `body` sees the bytes read (none when the peer closed).
  private func readAvailable<T>(
    maximum: Int, _ body: (UnsafeRawBufferPointer) -> T
  ) throws(LinkError) -> T? {
    let target = UnsafeMutableRawBufferPointer(rebasing: scratch[..<min(max(maximum, 1), scratch.count)])
    switch Result(catching: { () throws(SystemError) in try file.readSome(into: target) }) {
    case .success(nil): return nil
    case .success(let count?): return body(UnsafeRawBufferPointer(rebasing: target[..<count]))
    case .failure(let error) where error.errno == .connectionReset:
      return body(UnsafeRawBufferPointer(start: nil, count: 0))
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
  public func read(maximum: Int = readCapacity) throws(LinkError) -> [UInt8] {
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
