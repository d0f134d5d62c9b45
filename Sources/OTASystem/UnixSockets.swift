// Unix-domain sockets as the simulated link, the child-process channels and the BlueZ data
// sockets use them. Every socket is close-on-exec; sends never raise SIGPIPE.
// SOCK_* come through CBluetooth too: its headers pull in <sys/socket.h>, and which module owns
// those declarations depends on the build order.
import CBluetooth
import Glibc

/// The kinds of Unix socket in use here.
public enum SocketKind: Sendable {
  /// A byte stream (the simulated link, child-process channels).
  case stream
  /// Packets with boundaries (BlueZ's AcquireWrite socket: one packet per ATT write).
  case sequencedPacket

  var rawValue: Int32 {
    switch self {
    case .stream: Int32(SOCK_STREAM.rawValue)
    case .sequencedPacket: Int32(SOCK_SEQPACKET.rawValue)
    }
  }
}

/// Who is on the other end of a Unix socket (SO_PEERCRED).
public struct PeerCredentials: Equatable, Sendable {
  public var processID: Int32
  public var userID: UInt32
}

extension FileDescriptor {
  /// A new, unconnected Unix socket.
  public static func unixSocket(_ kind: SocketKind = .stream) throws(SystemError) -> FileDescriptor {
    let result = SystemCalls.perform(.socket) { _ in
      Int(socket(AF_UNIX, kind.rawValue | Int32(SOCK_CLOEXEC.rawValue), 0))
    }
    switch result {
    case .success(let descriptor): return FileDescriptor(taking: Int32(descriptor), path: "socket")
    case .failure(let code): throw SystemError(operation: "socket", path: "", errno: code)
    }
  }

  /// A connected pair of Unix sockets.
  public static func unixSocketPair(_ kind: SocketKind = .stream, nonBlocking: Bool = false)
    throws(SystemError)
    -> (FileDescriptor, FileDescriptor)
  {
    var ends: [Int32] = [-1, -1]
    let type =
      kind.rawValue | Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
    let result = SystemCalls.perform(.socketpair) { _ in Int(socketpair(AF_UNIX, type, 0, &ends)) }
    if case .failure(let code) = result { throw SystemError(operation: "socketpair", path: "", errno: code) }
    return (FileDescriptor(taking: ends[0], path: "socket"), FileDescriptor(taking: ends[1], path: "socket"))
  }

  /// `bind(2)` to `path` and `listen(2)`.
  public func listen(at path: String, backlog: Int32 = 4) throws(SystemError) {
    var address = try Self.address(path)
    let bound = SystemCalls.check(.bind, path: path) {
      withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(rawValue, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
      }
    }
    if let bound { throw SystemError(operation: "bind", path: path, errno: bound) }
    if let code = SystemCalls.check(.listen, path: path, { Glibc.listen(rawValue, backlog) }) {
      throw SystemError(operation: "listen", path: path, errno: code)
    }
  }

  /// `connect(2)` to the socket at `path`.
  public func connect(to path: String) throws(SystemError) {
    var address = try Self.address(path)
    let connected = SystemCalls.check(.connect, path: path) {
      withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.connect(rawValue, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
      }
    }
    if let connected { throw SystemError(operation: "connect", path: path, errno: connected) }
  }

  /// Accepts a waiting connection (close-on-exec); nil when none waits any more on a non-blocking
  /// listener (the client left between the poll and the accept).
  public func acceptWaiting() throws(SystemError) -> FileDescriptor? {
    let result = SystemCalls.perform(.accept, descriptor: rawValue) { _ in
      Int(accept(rawValue, nil, nil))
    }
    switch result {
    case .success(let client):
      _ = SystemCalls.check(.fcntl, descriptor: Int32(client)) { fcntl(Int32(client), F_SETFD, FD_CLOEXEC) }
      return FileDescriptor(taking: Int32(client), path: "socket")
    case .failure(.wouldBlock), .failure(.connectionAborted): return nil
    case .failure(let code): throw error("accept", code)
    }
  }

  /// One `send(2)` without SIGPIPE: the bytes taken; nil when a non-blocking socket (or `waiting`
  /// false) has no room now (EAGAIN, ENOBUFS).
  public func send(_ bytes: UnsafeRawBufferPointer, waiting: Bool = true) throws(SystemError) -> Int? {
    let flags = Int32(MSG_NOSIGNAL) | (waiting ? 0 : Int32(MSG_DONTWAIT))
    let result = SystemCalls.perform(.send, descriptor: rawValue, count: bytes.count) { count in
      Glibc.send(rawValue, bytes.baseAddress, count, flags)
    }
    switch result {
    case .success(let sent): return sent
    case .failure(.wouldBlock), .failure(.noBufferSpace): return nil
    case .failure(let code): throw error("send", code)
    }
  }

  /// One `recv(2)`: the bytes there (0 when the peer closed); nil when nothing waits now (EAGAIN).
  public func receive(into buffer: UnsafeMutableRawBufferPointer, waiting: Bool = true) throws(SystemError)
    -> Int?
  {
    let flags = waiting ? Int32(0) : Int32(MSG_DONTWAIT)
    let result = SystemCalls.perform(.recv, descriptor: rawValue, count: buffer.count) { count in
      recv(rawValue, buffer.baseAddress, count, flags)
    }
    switch result {
    case .success(let got): return got
    case .failure(.wouldBlock): return nil
    case .failure(let code): throw error("recv", code)
    }
  }

  /// One `recv(2)` that does not wait, into the whole of `buffer`, as a value: the bytes there (0
  /// when the peer closed), nil when nothing waits, or the error. For the loops that drain a socket
  /// a packet at a time and treat an error as the socket's end.
  public func receiveNow(into buffer: inout [UInt8]) -> Result<Int?, SystemError> {
    buffer.withUnsafeMutableBytes { bytes in
      Result { () throws(SystemError) in try receive(into: bytes, waiting: false) }
    }
  }

  /// The process and user on the other end (SO_PEERCRED), or nil when the kernel does not say.
  public var peerCredentials: PeerCredentials? {
    // struct ucred (Glibc leaves it out without _GNU_SOURCE): pid, uid, gid.
    var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
    var length = socklen_t(MemoryLayout.size(ofValue: credentials))
    let failure = SystemCalls.check(.getsockopt, descriptor: rawValue) {
      getsockopt(rawValue, SOL_SOCKET, SO_PEERCRED, &credentials, &length)
    }
    guard failure == nil else { return nil }
    return PeerCredentials(processID: credentials.pid, userID: credentials.uid)
  }

  private static func address(_ path: String) throws(SystemError) -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard bytes.count < capacity else {
      throw SystemError(
        operation: "socket path longer than \(capacity - 1) bytes:", path: path, errno: .nameTooLong)
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    return address
  }
}
