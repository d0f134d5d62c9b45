// A UDP socket over IPv4, for SMP over UDP: bound to one address, answering each datagram's sender.
// SOCK_* come through CBluetooth too: its headers pull in <sys/socket.h>, and which module owns
// those declarations depends on the build order.
import CBluetooth
import Glibc

/// An IPv4 address and port ("127.0.0.1:1337").
public struct UDPAddress: Equatable, Hashable, Sendable, CustomStringConvertible {
  /// The four bytes of the address, in order.
  public var octets: [UInt8]
  public var port: UInt16

  public init(octets: [UInt8], port: UInt16) {
    self.octets = octets
    self.port = port
  }

  /// Parses "A.B.C.D:PORT"; nil for anything else (names are not looked up).
  public init?(parsing text: String) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let port = UInt16(parts[1]) else { return nil }
    let octets = parts[0].split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
    guard octets.count == 4, parts[0].split(separator: ".", omittingEmptySubsequences: false).count == 4
    else {
      return nil
    }
    self.init(octets: octets, port: port)
  }

  public var description: String { octets.map(String.init).joined(separator: ".") + ":\(port)" }

  var socketAddress: sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    let host = octets.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    address.sin_addr = in_addr(s_addr: host.bigEndian)
    return address
  }

  init(_ address: sockaddr_in) {
    let host = UInt32(bigEndian: address.sin_addr.s_addr)
    octets = [
      UInt8(host >> 24), UInt8(truncatingIfNeeded: host >> 16), UInt8(truncatingIfNeeded: host >> 8),
      UInt8(truncatingIfNeeded: host),
    ]
    port = UInt16(bigEndian: address.sin_port)
  }
}

/// A bound, non-blocking UDP socket (close-on-exec).
public struct UDPSocket: Sendable {
  public let descriptor: FileDescriptor

  /// A socket bound to `address` (port 0 picks a free port: see `boundAddress`).
  public init(binding address: UDPAddress) throws(SystemError) {
    let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
    let result = SystemCalls.perform(.socket) { _ in Int(socket(AF_INET, type, 0)) }
    switch result {
    case .success(let raw): descriptor = FileDescriptor(taking: Int32(raw), path: "udp \(address)")
    case .failure(let code): throw SystemError(operation: "socket", path: "udp \(address)", errno: code)
    }
    var socketAddress = address.socketAddress
    let raw = descriptor.rawValue
    let failure = SystemCalls.check(.bind, path: "udp \(address)") {
      withUnsafePointer(to: &socketAddress) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(raw, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    if let failure { throw SystemError(operation: "bind", path: "udp \(address)", errno: failure) }
  }

  /// The address the socket is bound to (the port the kernel picked for port 0).
  public var boundAddress: UDPAddress? {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let raw = descriptor.rawValue
    let failure = SystemCalls.check(.getsockname, descriptor: raw) {
      withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(raw, $0, &length) }
      }
    }
    return failure == nil ? UDPAddress(address) : nil
  }

  /// One datagram and its sender; nil when none waits. A datagram longer than `maxLength` comes
  /// back cut to `maxLength` with `truncated` set (the rest is gone, as UDP does).
  public func receive(maxLength: Int) throws(SystemError) -> (
    bytes: [UInt8], from: UDPAddress, truncated: Bool
  )? {
    var buffer = [UInt8](repeating: 0, count: maxLength + 1)
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let raw = descriptor.rawValue
    let result = buffer.withUnsafeMutableBytes { bytes in
      SystemCalls.perform(.recvfrom, descriptor: raw, count: bytes.count) { count in
        withUnsafeMutablePointer(to: &address) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            recvfrom(raw, bytes.baseAddress, count, Int32(MSG_DONTWAIT), $0, &length)
          }
        }
      }
    }
    switch result {
    case .success(let count):
      return (Array(buffer.prefix(min(count, maxLength))), UDPAddress(address), count > maxLength)
    case .failure(.wouldBlock): return nil
    case .failure(let code): throw SystemError(operation: "recvfrom", path: descriptor.path, errno: code)
    }
  }

  /// Sends one datagram to `address`; false when the kernel has no room now (it is dropped, as UDP may).
  @discardableResult
  public func send(_ bytes: [UInt8], to address: UDPAddress) throws(SystemError) -> Bool {
    var socketAddress = address.socketAddress
    let raw = descriptor.rawValue
    let result = bytes.withUnsafeBytes { buffer in
      SystemCalls.perform(.sendto, descriptor: raw, count: buffer.count) { count in
        withUnsafePointer(to: &socketAddress) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            sendto(
              raw, buffer.baseAddress, count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), $0,
              socklen_t(MemoryLayout<sockaddr_in>.size))
          }
        }
      }
    }
    switch result {
    case .success: return true
    case .failure(.wouldBlock), .failure(.noBufferSpace): return false
    case .failure(let code): throw SystemError(operation: "sendto", path: descriptor.path, errno: code)
    }
  }
}
