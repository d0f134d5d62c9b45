import CLinux
import OTALink

#if canImport(Glibc)
  import Glibc
#endif

/// A Unix stream socket: the simulated link's wire. The only file in this target that makes
/// socket system calls. Closed explicitly (`close()`) or when released.
public final class UnixSocket {
  public let descriptor: Int32
  private var closed = false

  init(descriptor: Int32) { self.descriptor = descriptor }

  deinit { close() }

  public func close() {
    guard !closed else { return }
    closed = true
    _ = Glibc.close(descriptor)
  }

  /// Listens at `path`, replacing a stale socket file left by an earlier run. The listener does not
  /// block: take connections with `acceptWaiting()`.
  public static func listen(at path: String) throws(LinkError) -> UnixSocket {
    let socket = try make()
    unlink(path)
    var address = try makeAddress(path)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(socket.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard bound == 0 else { throw .system(operation: "bind \(path)", errno: errno) }
    guard Glibc.listen(socket.descriptor, 4) == 0 else { throw .system(operation: "listen", errno: errno) }
    try socket.makeNonBlocking()
    return socket
  }

  /// Connects to the device listening at `path`.
  public static func connect(to path: String) throws(LinkError) -> UnixSocket {
    let socket = try make()
    var address = try makeAddress(path)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(socket.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard connected == 0 else {
      let code = errno
      if code == ENOENT || code == ECONNREFUSED { throw .noDevice(path: path) }
      throw .system(operation: "connect \(path)", errno: code)
    }
    return socket
  }

  /// Accepts a waiting connection on a non-blocking listener, as a non-blocking socket; nil when
  /// none waits any more (the client left between the poll and the accept).
  public func acceptWaiting() throws(LinkError) -> UnixSocket? {
    while true {
      let client = Glibc.accept(descriptor, nil, nil)
      if client >= 0 {
        let socket = UnixSocket(descriptor: client)
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        try socket.makeNonBlocking()
        return socket
      }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK, ECONNABORTED: return nil
      default: throw .system(operation: "accept", errno: errno)
      }
    }
  }

  /// From now on reads and writes return at once instead of waiting.
  public func makeNonBlocking() throws(LinkError) {
    let flags = fcntl(descriptor, F_GETFL)
    guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
      throw .system(operation: "fcntl O_NONBLOCK", errno: errno)
    }
  }

  /// Who is on the other end (pid and uid, from SO_PEERCRED), for logs.
  public var peer: String {
    // struct ucred (Glibc leaves it out without _GNU_SOURCE): pid, uid, gid.
    var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
    var length = socklen_t(MemoryLayout.size(ofValue: credentials))
    guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
      return "fd \(descriptor)"
    }
    return "pid \(credentials.pid), uid \(credentials.uid)"
  }

  /// Reads what is there on a non-blocking socket: nil when nothing waits, empty when the peer closed.
  public func readAvailable(maximum: Int = 65536) throws(LinkError) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: maximum)
    while true {
      let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, maximum) }
      if count >= 0 {
        buffer.removeLast(maximum - count)
        return buffer
      }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return nil
      case ECONNRESET: return []
      default: throw .system(operation: "read", errno: errno)
      }
    }
  }

  /// Writes what the socket takes now, without waiting: the number of bytes taken (0 when its
  /// buffer is full).
  public func writeAvailable(_ bytes: ArraySlice<UInt8>) throws(LinkError) -> Int {
    guard !bytes.isEmpty else { return 0 }
    while true {
      let count = bytes.withUnsafeBytes {
        Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if count >= 0 { return count }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return 0
      case EPIPE, ECONNRESET: throw .disconnected
      default: throw .system(operation: "send", errno: errno)
      }
    }
  }

  /// Reads what is there (the caller polled for it); an empty result means the peer closed.
  public func read(maximum: Int = 65536) throws(LinkError) -> [UInt8] {
    // Polled first, a blocking socket has something to read; "nothing waits" is an error here.
    guard let bytes = try readAvailable(maximum: maximum) else {
      throw .system(operation: "read", errno: EAGAIN)
    }
    return bytes
  }

  /// Writes every byte, waiting as the socket drains.
  public func write(_ bytes: [UInt8]) throws(LinkError) {
    var offset = 0
    while offset < bytes.count {
      let count = bytes.withUnsafeBytes {
        Glibc.send(descriptor, $0.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
      }
      if count > 0 {
        offset += count
      } else if count < 0, errno == EINTR {
        continue
      } else if count < 0, errno == EPIPE || errno == ECONNRESET {
        throw .disconnected
      } else {
        throw .system(operation: "send", errno: errno)
      }
    }
  }

  public func send(_ frame: LinkFrame) throws(LinkError) { try write(frame.encoded) }

  private static func make() throws(LinkError) -> UnixSocket {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw .system(operation: "socket", errno: errno) }
    return UnixSocket(descriptor: descriptor)
  }

  private static func makeAddress(_ path: String) throws(LinkError) -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard bytes.count < capacity else {
      throw .system(operation: "socket path longer than \(capacity - 1) bytes: \(path)", errno: ENAMETOOLONG)
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    return address
  }
}
