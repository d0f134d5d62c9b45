/// What a BLE link is like, for the simulated links: the ATT MTU, the radio's timing, flow control,
/// and what goes wrong. Loss, duplication, reordering and bit flips apply to write-without-response
/// packets (data chunks); commands and notifications are reliable, as ATT's acknowledged writes and
/// the link layer's retransmissions make them. Reordering lets data and commands overtake each other
/// (EATT's parallel bearers) but never one command another: a central sends each control-point
/// write after the previous one's ATT response.
///
/// Written on a command line as `--link mtu=185,interval=30ms,loss=0.02` (see `LinkConditions.help`).
public struct LinkConditions: Equatable, Sendable, CustomStringConvertible {
  public enum PHY: String, Sendable, CaseIterable {
    case le1M = "1M"
    case le2M = "2M"
    /// LE Coded, S=8: 125 kbit/s.
    case coded = "coded"
    /// LE Coded, S=2: 500 kbit/s.
    case codedS2 = "coded-s2"

    /// Microseconds per byte of the PDU (header, payload, MIC) and CRC on the air.
    var microsecondsPerByte: Double {
      switch self {
      case .le1M: 8
      case .le2M: 4
      case .coded: 64
      case .codedS2: 16
      }
    }

    /// Microseconds of a packet besides its PDU and CRC: the preamble and access address (1M: 1 +
    /// 4 bytes, 2M: 2 + 4 bytes); on the coded PHY the preamble (80 µs), access address (256),
    /// coding indicator (16) and the two terminators, always coded S=8 but the second.
    var framingMicroseconds: Double {
      switch self {
      case .le1M: 5 * 8
      case .le2M: 6 * 4
      case .coded: 80 + 256 + 16 + 24 + 24
      case .codedS2: 80 + 256 + 16 + 24 + 6
      }
    }
  }

  public var mtu: Int
  /// One connection event per interval.
  public var connectionInterval: Duration
  /// Link-layer packets the central may send in one connection event (the controller's limit).
  public var packetsPerEvent: Int
  public var phy: PHY
  /// The link-layer payload: 27 bytes, or 251 with Data Length Extension.
  public var dataLength: Int
  /// How long a connection event may last: the radio's time for this link in each interval (nil:
  /// the whole interval).
  public var eventLength: Duration?
  /// Whether the link is encrypted: each link-layer packet with a payload carries a 4-byte MIC.
  public var encrypted = false
  /// Write-without-response packets the link buffers: the sender's flow-control credit.
  public var queueDepth: Int
  public var loss: Double
  public var duplication: Double
  /// The chance that a packet is held back behind later ones.
  public var reordering: Double
  public var bitFlips: Double
  /// The chance, per connection event, that the link drops.
  public var disconnects: Double
  /// Drop the link once, when this many data bytes have crossed it (a forced disconnect).
  public var disconnectAfterBytes: Int?
  /// Seeds the link's randomness, so a run can be replayed.
  public var seed: UInt64
  /// Whether air time limits a connection event (else only `packetsPerEvent` does): off only to
  /// measure the two ends, not the air.
  public var airTimePacing = true
  /// Data over an LE credit-based L2CAP channel of this shape instead of ATT writes (nil: GATT).
  public var channel: ChannelShape?

  public init(
    mtu: Int = 247, connectionInterval: Duration = .milliseconds(15), packetsPerEvent: Int = 6,
    phy: PHY = .le2M, dataLength: Int = 251, queueDepth: Int = 16, loss: Double = 0, duplication: Double = 0,
    reordering: Double = 0, bitFlips: Double = 0, disconnects: Double = 0, disconnectAfterBytes: Int? = nil,
    seed: UInt64 = 1
  ) {
    self.mtu = mtu
    self.connectionInterval = connectionInterval
    self.packetsPerEvent = packetsPerEvent
    self.phy = phy
    self.dataLength = dataLength
    self.queueDepth = queueDepth
    self.loss = loss
    self.duplication = duplication
    self.reordering = reordering
    self.bitFlips = bitFlips
    self.disconnects = disconnects
    self.disconnectAfterBytes = disconnectAfterBytes
    self.seed = seed
  }

  /// A hostile link: everything that can go wrong goes wrong now and then.
  public static func hostile(mtu: Int) -> LinkConditions {
    LinkConditions(
      mtu: mtu, loss: 0.02, duplication: 0.02, reordering: 0.1, bitFlips: 0.002, disconnects: 0.002)
  }
}
