// LE credit-based L2CAP channels (CoC): AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP. One packet is
// one SDU; the kernel segments it into whole link-layer packets and runs the credit flow control.
// Every call goes through the SystemCalls seam.
import CBluetooth
import Glibc

/// One end of an LE L2CAP channel: an address, its type, and a PSM (0 when binding: the kernel
/// picks a free dynamic one, 0x80 to 0xFF).
public struct L2CAPEndpoint: Hashable, Sendable, CustomStringConvertible {
  public var address: BluetoothAddress
  public var type: BluetoothAddressType
  public var psm: UInt16

  public init(address: BluetoothAddress, type: BluetoothAddressType, psm: UInt16) {
    self.address = address
    self.type = type
    self.psm = psm
  }

  public var description: String { "\(address) (\(type)) PSM 0x\(String(psm, radix: 16))" }

  var socketAddress: sockaddr_l2 {
    var value = sockaddr_l2()
    value.l2_family = sa_family_t(AF_BLUETOOTH)
    value.l2_psm = psm.littleEndian
    value.l2_bdaddr = address.kernelValue
    value.l2_bdaddr_type = type.rawValue
    return value
  }

  init(_ value: sockaddr_l2) {
    address = BluetoothAddress(kernelValue: value.l2_bdaddr)
    type = BluetoothAddressType(rawValue: value.l2_bdaddr_type) ?? .lePublic
    psm = UInt16(littleEndian: value.l2_psm)
  }
}

/// What the kernel reports about a connected channel and its link: each figure nil when this
/// kernel does not offer it.
public struct L2CAPChannelParameters: Equatable, Sendable {
  /// The largest SDU this side may send (the peer's receive MTU).
  public var sendMTU: Int?
  /// The largest SDU this side takes.
  public var receiveMTU: Int?
  /// The LE PHYs in use (BT_PHY), e.g. "1M" or "2M".
  public var phy: String?
  public var security: BluetoothSecurity?

  public init(
    sendMTU: Int? = nil, receiveMTU: Int? = nil, phy: String? = nil, security: BluetoothSecurity? = nil
  ) {
    self.sendMTU = sendMTU
    self.receiveMTU = receiveMTU
    self.phy = phy
    self.security = security
  }

  /// BT_PHY's bits as one name for the transmit side ("1M", "2M", "Coded"), nil when none is set.
  public static func phyName(_ bits: UInt32) -> String? {
    if bits & UInt32(BT_PHY_LE_2M_TX) != 0 { return "2M" }
    if bits & UInt32(BT_PHY_LE_CODED_TX) != 0 { return "Coded" }
    if bits & UInt32(BT_PHY_LE_1M_TX) != 0 { return "1M" }
    return nil
  }
}

extension FileDescriptor {
  /// A new LE L2CAP channel socket (close-on-exec), not yet bound.
  public static func l2capSocket(nonBlocking: Bool = false) throws(SystemError) -> FileDescriptor {
    let type =
      Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
      | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
    let result = SystemCalls.perform(.socket, path: "l2cap") { _ in
      Int(socket(AF_BLUETOOTH, type, BTPROTO_L2CAP))
    }
    switch result {
    case .success(let raw): return FileDescriptor(taking: Int32(raw), path: "l2cap")
    case .failure(let code): throw SystemError(operation: "socket", path: "l2cap", errno: code)
    }
  }

  /// `bind(2)` to a local address (`BluetoothAddress.any` for any adapter) and PSM (0: a free
  /// dynamic one; read it back with `l2capLocalEndpoint`).
  public func bindL2CAP(_ endpoint: L2CAPEndpoint) throws(SystemError) {
    var address = endpoint.socketAddress
    let failure = SystemCalls.check(.bind, path: "l2cap \(endpoint)") {
      withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(rawValue, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
        }
      }
    }
    if let failure { throw SystemError(operation: "bind", path: "l2cap \(endpoint)", errno: failure) }
  }

  /// `listen(2)` on a bound socket.
  public func listenL2CAP(backlog: Int32 = 1) throws(SystemError) {
    if let code = SystemCalls.check(.listen, path: "l2cap", { Glibc.listen(rawValue, backlog) }) {
      throw SystemError(operation: "listen", path: "l2cap", errno: code)
    }
  }

  /// `connect(2)` to a peer's PSM. On a blocking socket it waits for the channel (up to the send
  /// timeout, `setSendTimeout`).
  public func connectL2CAP(to endpoint: L2CAPEndpoint) throws(SystemError) {
    var address = endpoint.socketAddress
    let failure = SystemCalls.check(.connect, path: "l2cap \(endpoint)") {
      withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.connect(rawValue, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
        }
      }
    }
    if let failure { throw SystemError(operation: "connect", path: "l2cap \(endpoint)", errno: failure) }
  }

  /// Accepts a waiting channel (close-on-exec, non-blocking) and says who opened it; nil when none
  /// waits any more.
  public func acceptL2CAP() throws(SystemError) -> (FileDescriptor, L2CAPEndpoint)? {
    var address = sockaddr_l2()
    var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
    let result = SystemCalls.perform(.accept, path: "l2cap", descriptor: rawValue) { _ in
      withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Int(accept(rawValue, $0, &length)) }
      }
    }
    switch result {
    case .success(let client):
      _ = SystemCalls.check(.fcntl, descriptor: Int32(client)) { fcntl(Int32(client), F_SETFD, FD_CLOEXEC) }
      let socket = FileDescriptor(taking: Int32(client), path: "l2cap")
      try socket.makeNonBlocking()
      return (socket, L2CAPEndpoint(address))
    case .failure(.wouldBlock), .failure(.connectionAborted): return nil
    case .failure(let code): throw SystemError(operation: "accept", path: "l2cap", errno: code)
    }
  }

  /// The local address and PSM a socket is bound to (the PSM the kernel picked for 0).
  public var l2capLocalEndpoint: L2CAPEndpoint? {
    var address = sockaddr_l2()
    var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
    let failure = SystemCalls.check(.getsockname, path: "l2cap", descriptor: rawValue) {
      withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(rawValue, $0, &length) }
      }
    }
    return failure == nil ? L2CAPEndpoint(address) : nil
  }

  /// Asks for at least `level` on the link (BT_SECURITY): set on a listener, every channel it
  /// accepts needs it; the kernel pairs or encrypts before the channel opens, or refuses it.
  public func setBluetoothSecurity(_ level: BluetoothSecurity) throws(SystemError) {
    var value = bt_security(level: level.rawValue, key_size: 0)
    try setOption(SOL_BLUETOOTH, BT_SECURITY, &value, "BT_SECURITY")
  }

  /// The largest SDU this side takes (BT_RCVMTU): set after binding to an LE address (the kernel
  /// refuses it, EINVAL, on a socket not yet known to be LE) and before listen or connect.
  public func setReceiveMTU(_ mtu: UInt16) throws(SystemError) {
    var value = mtu
    try setOption(SOL_BLUETOOTH, BT_RCVMTU, &value, "BT_RCVMTU")
  }

  /// Room for `bytes` of received data (SO_RCVBUFFORCE, which root may set past
  /// net.core.rmem_max, else SO_RCVBUF within it). An LE channel's SDUs are reassembled from
  /// link-layer frames and cost the buffer several times their size; a kernel before 6.10 gives its
  /// credits back whether or not the reader keeps up, and resets the channel when the buffer is full.
  public func setReceiveBufferSize(_ bytes: Int) throws(SystemError) {
    var value = Int32(clamping: bytes)
    do {
      try setOption(SOL_SOCKET, SO_RCVBUFFORCE, &value, "SO_RCVBUFFORCE")
    } catch {
      try setOption(SOL_SOCKET, SO_RCVBUF, &value, "SO_RCVBUF")
    }
  }

  /// How long a blocking send or connect may wait (SO_SNDTIMEO).
  public func setSendTimeout(_ timeout: Duration) throws(SystemError) {
    let (seconds, attoseconds) = timeout.components
    var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    try setOption(SOL_SOCKET, SO_SNDTIMEO, &value, "SO_SNDTIMEO")
  }

  /// The channel's MTUs, PHY and security as the kernel reports them.
  public var l2capParameters: L2CAPChannelParameters {
    var parameters = L2CAPChannelParameters()
    if let mtu: UInt16 = option(SOL_BLUETOOTH, BT_SNDMTU) { parameters.sendMTU = Int(mtu) }
    if let mtu: UInt16 = option(SOL_BLUETOOTH, BT_RCVMTU) { parameters.receiveMTU = Int(mtu) }
    if let phy: UInt32 = option(SOL_BLUETOOTH, BT_PHY) {
      parameters.phy = L2CAPChannelParameters.phyName(phy)
    }
    if let security: bt_security = option(SOL_BLUETOOTH, BT_SECURITY) {
      parameters.security = BluetoothSecurity(rawValue: security.level)
    }
    return parameters
  }

  private func setOption<T: BitwiseCopyable>(_ level: Int32, _ name: Int32, _ value: inout T, _ what: String)
    throws(SystemError)
  {
    let failure = SystemCalls.check(.setsockopt, path: what, descriptor: rawValue) {
      setsockopt(rawValue, level, name, &value, socklen_t(MemoryLayout<T>.size))
    }
    if let failure { throw SystemError(operation: "setsockopt \(what)", path: path, errno: failure) }
  }

  private func option<T>(_ level: Int32, _ name: Int32) -> T? {
    let value = UnsafeMutablePointer<T>.allocate(capacity: 1)
    defer { value.deallocate() }
    let raw = UnsafeMutableRawPointer(value)
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<T>.size)
    var length = socklen_t(MemoryLayout<T>.size)
    let failure = SystemCalls.check(.getsockopt, descriptor: rawValue) {
      getsockopt(rawValue, level, name, raw, &length)
    }
    return failure == nil ? value.pointee : nil
  }
}
