import OTASystem

/// A connection's timing as the controller set it (Core spec Vol 4 Part E 7.7.65.1 and .3), in the
/// spec's units.
public struct LinkTiming: Equatable, Sendable {
  /// The connection interval in units of 1.25 ms (0x0006 to 0x0C80: 7.5 ms to 4 s).
  public var interval: UInt16
  /// Connection events the peripheral may skip (0x0000 to 0x01F3).
  public var peripheralLatency: UInt16
  /// The supervision timeout in units of 10 ms (0x000A to 0x0C80: 100 ms to 32 s).
  public var supervisionTimeout: UInt16

  public init(interval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16) {
    self.interval = interval
    self.peripheralLatency = peripheralLatency
    self.supervisionTimeout = supervisionTimeout
  }

  /// Values the spec allows; anything else is an odd event, not a fact.
  var isValid: Bool {
    (0x0006...0x0C80).contains(interval) && peripheralLatency <= 0x01F3
      && (0x000A...0x0C80).contains(supervisionTimeout)
  }

  public var intervalMilliseconds: Double { Double(interval) * 1.25 }
  public var supervisionTimeoutMilliseconds: Int { Int(supervisionTimeout) * 10 }
}

/// The largest link-layer data payloads and their air times each way (LE Data Length Change,
/// 7.7.65.7).
public struct LinkDataLength: Equatable, Sendable {
  public var maxTxOctets: UInt16
  public var maxTxTime: UInt16
  public var maxRxOctets: UInt16
  public var maxRxTime: UInt16

  public init(maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
    self.maxTxOctets = maxTxOctets
    self.maxTxTime = maxTxTime
    self.maxRxOctets = maxRxOctets
    self.maxRxTime = maxRxTime
  }

  /// Octets 27 to 251 (0x001B to 0x00FB), times 328 to 17040 µs (0x0148 to 0x4290).
  var isValid: Bool {
    let octets = UInt16(0x001B)...UInt16(0x00FB)
    let times = UInt16(0x0148)...UInt16(0x4290)
    return octets.contains(maxTxOctets) && octets.contains(maxRxOctets) && times.contains(maxTxTime)
      && times.contains(maxRxTime)
  }
}

/// An LE PHY as HCI numbers it (LE PHY Update Complete, 7.7.65.12).
public enum LinkPHY: UInt8, Equatable, Sendable, CustomStringConvertible {
  case le1M = 1
  case le2M = 2
  case leCoded = 3

  public var description: String {
    switch self {
    case .le1M: "1M"
    case .le2M: "2M"
    case .leCoded: "Coded"
    }
  }
}

/// The PHYs of a link each way (LE PHY Update Complete).
public struct LinkPHYs: Equatable, Sendable {
  public var tx: LinkPHY
  public var rx: LinkPHY

  public init(tx: LinkPHY, rx: LinkPHY) {
    self.tx = tx
    self.rx = rx
  }
}

/// Which end of the link this adapter is.
public enum LinkRole: UInt8, Equatable, Sendable, CustomStringConvertible {
  case central = 0
  case peripheral = 1

  public var description: String { self == .central ? "central" : "peripheral" }
}

/// One LE link as the controller reported it: who, and its parameters as last set.
public struct LinkFacts: Equatable, Sendable, CustomStringConvertible {
  public var handle: UInt16
  public var role: LinkRole
  public var peer: BluetoothAddress
  public var timing: LinkTiming
  /// Nil until the controller reports a data length change (a link that kept 27 octets may never).
  public var dataLength: LinkDataLength?
  /// Nil until a PHY update: the link then runs on the PHY it was made on, 1M for a legacy
  /// connection.
  public var phy: LinkPHYs?

  public init(
    handle: UInt16, role: LinkRole, peer: BluetoothAddress, timing: LinkTiming,
    dataLength: LinkDataLength? = nil, phy: LinkPHYs? = nil
  ) {
    self.handle = handle
    self.role = role
    self.peer = peer
    self.timing = timing
    self.dataLength = dataLength
    self.phy = phy
  }

  /// The transmit PHY's name, or what is known without an update.
  public var phyDescription: String {
    guard let phy else { return "1M (no PHY update seen)" }
    return phy.tx == phy.rx ? "\(phy.tx)" : "\(phy.tx) tx, \(phy.rx) rx"
  }

  /// "interval 30 ms, latency 0, timeout 720 ms, data length tx 251 rx 251 octets, PHY 2M".
  public var description: String {
    var text =
      "interval \(Self.milliseconds(timing.intervalMilliseconds)) ms, latency \(timing.peripheralLatency), "
      + "timeout \(timing.supervisionTimeoutMilliseconds) ms, "
    if let dataLength {
      text += "data length tx \(dataLength.maxTxOctets) rx \(dataLength.maxRxOctets) octets, "
    } else {
      text += "data length 27 octets (no change seen), "
    }
    return text + "PHY \(phyDescription)"
  }

  /// 30 -> "30", 7.5 -> "7.5", 31.25 -> "31.25".
  static func milliseconds(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let whole = hundredths / 100
    let fraction = hundredths % 100
    if fraction == 0 { return "\(whole)" }
    if fraction % 10 == 0 { return "\(whole).\(fraction / 10)" }
    return "\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
  }
}
