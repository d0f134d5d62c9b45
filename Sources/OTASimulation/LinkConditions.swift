/// What the in-memory link does to traffic. Loss, duplication, reordering and bit flips apply to
/// write-without-response packets (data chunks); commands and notifications are reliable, as ATT's
/// acknowledged writes and the link layer's retransmissions make them. Reordering lets data and
/// commands overtake each other (EATT's parallel bearers) but never one command another: a central
/// sends each control-point write after the previous one's ATT response.
public struct LinkConditions: Equatable, Sendable {
  public var mtu: Int
  /// One connection event per interval moves up to `packetsPerEvent` packets each way.
  public var connectionInterval: Duration
  public var packetsPerEvent: Int
  /// Write-without-response packets the link buffers: the sender's flow-control credit.
  public var queueDepth: Int
  public var loss: Double
  public var duplication: Double
  /// The chance that a packet is held back behind later ones (as EATT's parallel bearers do).
  public var reordering: Double
  public var bitFlips: Double
  /// The chance, per connection event, that the link drops.
  public var disconnects: Double
  /// Drop the link once, when this many data bytes have crossed it (a forced disconnect).
  public var disconnectAfterBytes: Int?
  /// The chance, at a disconnect, that the device's process restarts from its storage as well.
  public var restartsOnDisconnect: Double
  /// The chance that such a restart is a power cut: writes not yet synced are lost or torn.
  public var powerCutsOnRestart: Double
  /// How long the device is unreachable while it restarts.
  public var restartTime: Duration

  public init(
    mtu: Int = 247, connectionInterval: Duration = .milliseconds(15), packetsPerEvent: Int = 6,
    queueDepth: Int = 16, loss: Double = 0, duplication: Double = 0, reordering: Double = 0,
    bitFlips: Double = 0, disconnects: Double = 0, disconnectAfterBytes: Int? = nil,
    restartsOnDisconnect: Double = 0,
    powerCutsOnRestart: Double = 0, restartTime: Duration = .milliseconds(300)
  ) {
    self.mtu = mtu
    self.connectionInterval = connectionInterval
    self.packetsPerEvent = packetsPerEvent
    self.queueDepth = queueDepth
    self.loss = loss
    self.duplication = duplication
    self.reordering = reordering
    self.bitFlips = bitFlips
    self.disconnects = disconnects
    self.disconnectAfterBytes = disconnectAfterBytes
    self.restartsOnDisconnect = restartsOnDisconnect
    self.powerCutsOnRestart = powerCutsOnRestart
    self.restartTime = restartTime
  }

  /// A hostile link: everything that can go wrong goes wrong now and then.
  public static func hostile(mtu: Int) -> LinkConditions {
    LinkConditions(
      mtu: mtu, loss: 0.02, duplication: 0.02, reordering: 0.1, bitFlips: 0.002, disconnects: 0.002,
      restartsOnDisconnect: 0.5, powerCutsOnRestart: 0.5)
  }
}
