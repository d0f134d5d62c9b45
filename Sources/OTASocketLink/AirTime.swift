import OTAWire

/// How long things take on the air, from `LinkConditions`: the basis of the simulated link's pacing
/// and of the raw capacity that benchmarks compare goodput with.
///
/// An ATT write of n value bytes is an L2CAP frame of n + 3 (ATT header) + 4 (L2CAP header) bytes,
/// cut into link-layer packets of at most `dataLength` payload bytes. Each link-layer packet costs
/// its bytes plus 10 bytes of framing (preamble, access address, header, CRC) at the PHY's rate,
/// then the inter-frame space, the peripheral's empty acknowledgement and another inter-frame space.
public struct AirTime: Sendable {
  public let conditions: LinkConditions
  static let interFrameSpace = 150.0  // µs
  static let linkLayerOverhead = 10  // bytes per link-layer packet besides its payload

  public init(_ conditions: LinkConditions) { self.conditions = conditions }

  /// What one ATT write (or notification) of `valueLength` bytes costs: link-layer packets and µs.
  public func cost(valueLength: Int) -> (packets: Int, microseconds: Double) {
    var left = valueLength + 3 + 4
    var packets = 0
    var microseconds = 0.0
    repeat {
      let payload = min(left, conditions.dataLength)
      microseconds += packetMicroseconds(payload: payload)
      packets += 1
      left -= payload
    } while left > 0
    return (packets, microseconds)
  }

  /// Microseconds one link-layer packet of `payload` bytes occupies, acknowledgement included.
  func packetMicroseconds(payload: Int) -> Double {
    let perByte = conditions.phy.microsecondsPerByte
    let acknowledgement = Double(Self.linkLayerOverhead) * perByte
    return Double(payload + Self.linkLayerOverhead) * perByte + Self.interFrameSpace + acknowledgement
      + Self.interFrameSpace
  }

  public var intervalMicroseconds: Double {
    Double(conditions.connectionInterval.components.seconds) * 1e6
      + Double(conditions.connectionInterval.components.attoseconds) / 1e12
  }

  /// How many writes of `valueLength` bytes one connection event carries, on average: the
  /// controller's packet limit and the air time both bound it (a write may span events).
  public func writesPerEvent(valueLength: Int) -> Double {
    let (packets, microseconds) = cost(valueLength: valueLength)
    let byPackets = Double(conditions.packetsPerEvent) / Double(packets)
    guard conditions.airTimePacing else { return byPackets }
    let byAir = intervalMicroseconds / microseconds
    return min(byPackets, byAir)
  }

  /// The most ATT value bytes per second the link could carry: full-size write commands (MTU − 3,
  /// at most 510 bytes) in every connection event. Goodput divided by this is the protocol's share.
  public var rawPayloadBytesPerSecond: Double {
    let value = min(ATTMTU(clamping: conditions.mtu).maxWriteValue, 510)
    return writesPerEvent(valueLength: value) * Double(value) / (intervalMicroseconds / 1e6)
  }
}
