import OTASystem

/// The controller's events about LE links, parsed from what a raw HCI socket reads (the packet
/// type 0x04, the event code, the parameter length, the parameters; Core spec Vol 4 Part E 5.4.4,
/// 7.7.5 and 7.7.65). Pure: bytes in, a fact out; a truncated, failed or out-of-range event is nil.
public enum HCILinkEvent: Equatable, Sendable {
  /// LE Connection Complete (0x01), LE Enhanced Connection Complete (0x0A, v2 0x29), status 0.
  case connected(handle: UInt16, role: LinkRole, peer: BluetoothAddress, timing: LinkTiming)
  /// LE Connection Update Complete (0x03), status 0.
  case connectionUpdated(handle: UInt16, timing: LinkTiming)
  /// LE Data Length Change (0x07).
  case dataLengthChanged(handle: UInt16, LinkDataLength)
  /// LE PHY Update Complete (0x0C), status 0.
  case phyUpdated(handle: UInt16, tx: LinkPHY, rx: LinkPHY)
  /// Disconnection Complete (0x05), status 0: the handle is gone.
  case disconnected(handle: UInt16, reason: UInt8)

  enum Subevent {
    static let connectionComplete: UInt8 = 0x01
    static let connectionUpdateComplete: UInt8 = 0x03
    static let dataLengthChange: UInt8 = 0x07
    static let enhancedConnectionComplete: UInt8 = 0x0A
    static let phyUpdateComplete: UInt8 = 0x0C
    static let enhancedConnectionCompleteV2: UInt8 = 0x29
  }

  public init?(packet: [UInt8]) {
    guard packet.count >= 3, packet[0] == HCIEventCode.eventPacket else { return nil }
    let length = Int(packet[2])
    guard packet.count >= 3 + length else { return nil }
    let parameters = Parameters(Array(packet[3..<(3 + length)]))
    switch packet[1] {
    case HCIEventCode.disconnectionComplete:
      // Status, Connection_Handle, Reason.
      guard let status = parameters.u8(0), status == 0, let handle = parameters.handle(1),
        let reason = parameters.u8(3)
      else { return nil }
      self = .disconnected(handle: handle, reason: reason)
    case HCIEventCode.leMeta:
      guard let event = Self.leMeta(parameters) else { return nil }
      self = event
    default:
      return nil
    }
  }

  /// An LE Meta event's parameters: the subevent code first, then the subevent's own.
  private static func leMeta(_ p: Parameters) -> HCILinkEvent? {
    switch p.u8(0) {
    case Subevent.connectionComplete:
      // Status, Handle, Role, Peer_Address_Type, Peer_Address(6), Interval, Latency, Timeout, Clock.
      return connected(p, timingAt: 12, end: 19)
    case Subevent.enhancedConnectionComplete:
      // As above with Local and Peer Resolvable_Private_Address (6 each) before the interval.
      return connected(p, timingAt: 24, end: 31)
    case Subevent.enhancedConnectionCompleteV2:
      // As the enhanced event, then Advertising_Handle and Sync_Handle.
      return connected(p, timingAt: 24, end: 34)
    case Subevent.connectionUpdateComplete:
      // Status, Handle, Interval, Latency, Timeout.
      guard p.count >= 10, p.u8(1) == 0, let handle = p.handle(2), let timing = p.timing(4) else {
        return nil
      }
      return .connectionUpdated(handle: handle, timing: timing)
    case Subevent.dataLengthChange:
      // Handle, Max_TX_Octets, Max_TX_Time, Max_RX_Octets, Max_RX_Time (no status).
      guard let handle = p.handle(1), let txOctets = p.u16(3), let txTime = p.u16(5), let rxOctets = p.u16(7),
        let rxTime = p.u16(9)
      else { return nil }
      let length = LinkDataLength(
        maxTxOctets: txOctets, maxTxTime: txTime, maxRxOctets: rxOctets, maxRxTime: rxTime)
      guard length.isValid else { return nil }
      return .dataLengthChanged(handle: handle, length)
    case Subevent.phyUpdateComplete:
      // Status, Handle, TX_PHY, RX_PHY.
      guard p.u8(1) == 0, let handle = p.handle(2), let tx = p.u8(4).flatMap(LinkPHY.init(rawValue:)),
        let rx = p.u8(5).flatMap(LinkPHY.init(rawValue:))
      else { return nil }
      return .phyUpdated(handle: handle, tx: tx, rx: rx)
    default:
      return nil
    }
  }

  private static func connected(_ p: Parameters, timingAt offset: Int, end: Int) -> HCILinkEvent? {
    guard p.count >= end, p.u8(1) == 0, let handle = p.handle(2),
      let role = p.u8(4).flatMap(LinkRole.init(rawValue:)), let peer = p.address(6),
      let timing = p.timing(offset)
    else { return nil }
    return .connected(handle: handle, role: role, peer: peer, timing: timing)
  }

  /// Bounds-checked little-endian reads: nil past the end, never a trap.
  struct Parameters {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var count: Int { bytes.count }

    func u8(_ at: Int) -> UInt8? { at >= 0 && at < bytes.count ? bytes[at] : nil }

    func u16(_ at: Int) -> UInt16? {
      guard let low = u8(at), let high = u8(at + 1) else { return nil }
      return UInt16(low) | UInt16(high) << 8
    }

    /// A connection handle: 12 bits (0x0000 to 0x0EFF); the top four are flags elsewhere.
    func handle(_ at: Int) -> UInt16? {
      guard let value = u16(at) else { return nil }
      let handle = value & 0x0FFF
      return handle <= 0x0EFF ? handle : nil
    }

    /// An address on the wire: least significant byte first.
    func address(_ at: Int) -> BluetoothAddress? {
      guard at >= 0, at + 6 <= bytes.count else { return nil }
      return BluetoothAddress(bytes: bytes[at..<(at + 6)].reversed())
    }

    func timing(_ at: Int) -> LinkTiming? {
      guard let interval = u16(at), let latency = u16(at + 2), let timeout = u16(at + 4) else { return nil }
      let timing = LinkTiming(interval: interval, peripheralLatency: latency, supervisionTimeout: timeout)
      return timing.isValid ? timing : nil
    }
  }
}
