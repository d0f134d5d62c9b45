import OTAWire

/// How long things take on the air, from `LinkConditions`: the basis of the simulated link's pacing
/// and of the capacities that benchmarks compare goodput with.
///
/// An ATT PDU of n bytes (a write of v value bytes is v + 3) travels in an L2CAP frame of n + 4
/// bytes, cut into link-layer packets of at most `dataLength` payload bytes. A link-layer packet
/// costs the PHY's framing (preamble, access address, header, CRC; coded: the coding's own
/// fields), its payload and, when encrypted, a 4-byte MIC. In a connection event the central sends
/// a packet, the peripheral answers T_IFS (150 µs) later with its own (an empty PDU when it has
/// nothing to say, data when it has a notification or a response), and the next exchange starts
/// T_IFS after that. An exchange happens only if it ends within the event: what does not fit
/// waits for the next event.
public struct AirTime: Sendable {
  public let conditions: LinkConditions
  /// The link's slot on a radio it shares with other links (`SharedRadio`), µs: its events' exchanges
  /// must end T_IFS before the slot does. Nil for a link with the radio to itself.
  public let slotMicroseconds: Double?
  /// T_IFS, µs.
  public static let interFrameSpace = 150.0
  /// The link-layer header (2) and CRC (3) of every packet.
  static let headerAndCRC = 5
  /// The MIC of an encrypted packet with a payload.
  static let micLength = 4

  public init(_ conditions: LinkConditions) { self.init(conditions, slotMicroseconds: nil) }

  init(_ conditions: LinkConditions, slotMicroseconds: Double?) {
    self.conditions = conditions
    self.slotMicroseconds = slotMicroseconds
  }

  public var dataLength: Int { conditions.dataLength }

  /// Microseconds one link-layer packet with `payload` bytes occupies on the air.
  public func packetMicroseconds(payload: Int) -> Double {
    let mic = conditions.encrypted && payload > 0 ? Self.micLength : 0
    return conditions.phy.framingMicroseconds
      + Double(payload + mic + Self.headerAndCRC) * conditions.phy.microsecondsPerByte
  }

  /// One exchange: the central's packet, T_IFS, the peripheral's packet.
  public func exchangeMicroseconds(central: Int, peripheral: Int) -> Double {
    packetMicroseconds(payload: central) + Self.interFrameSpace + packetMicroseconds(payload: peripheral)
  }

  /// The link-layer packets an ATT PDU of `attLength` bytes takes, by payload.
  public func fragments(attLength: Int) -> [Int] {
    var left = attLength + 4
    var sizes: [Int] = []
    repeat {
      sizes.append(min(left, dataLength))
      left -= min(left, dataLength)
    } while left > 0
    return sizes
  }

  /// What one ATT write (or notification) of `valueLength` bytes costs on its own: link-layer
  /// packets, and µs with an empty acknowledgement and T_IFS after each.
  public func cost(valueLength: Int) -> (packets: Int, microseconds: Double) {
    let sizes = fragments(attLength: valueLength + ATTMTU.headerSize)
    let microseconds = sizes.reduce(0.0) {
      $0 + exchangeMicroseconds(central: $1, peripheral: 0) + Self.interFrameSpace
    }
    return (sizes.count, microseconds)
  }

  public var intervalMicroseconds: Double { Self.microseconds(conditions.connectionInterval) }

  /// The radio time of one connection event: the event length, at most the interval.
  public var eventMicroseconds: Double {
    min(conditions.eventLength.map(Self.microseconds) ?? intervalMicroseconds, intervalMicroseconds)
  }

  static func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
  }
}
