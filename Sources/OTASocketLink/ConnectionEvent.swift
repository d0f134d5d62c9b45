/// One connection event's radio time, as exchanges are fitted into it: each exchange (central
/// packet, T_IFS, peripheral packet) starts T_IFS after the previous one and happens only if it
/// ends within the event and the controller's packet limit allows another. Nothing borrows from
/// the next event. The first exchange always happens, so that a packet longer than the whole event
/// (coded PHY, short interval) still gets through, one per event. On a shared radio (`AirTime`'s
/// slot) every exchange, the first too, must also end T_IFS before the link's slot does, where the
/// next link's event may begin; the plan (`sharedInterval`) makes every slot hold at least one.
public struct ConnectionEvent: Sendable {
  public let air: AirTime
  /// The most central packets in this event; nil for no limit but air time.
  public let packetLimit: Int?
  /// Whether air time bounds the event (the link's `pace`).
  public let airLimited: Bool
  /// Microseconds from the event's start to the end of its last exchange.
  public private(set) var used = 0.0
  public private(set) var exchanges = 0

  public init(air: AirTime, packetLimit: Int?, airLimited: Bool = true) {
    self.air = air
    self.packetLimit = packetLimit
    self.airLimited = airLimited
  }

  /// The event of `air`'s link: its packet limit, paced as its conditions say.
  public init(link air: AirTime) {
    self.init(air: air, packetLimit: air.conditions.packetsPerEvent, airLimited: air.conditions.airTimePacing)
  }

  /// Fits an exchange of packets with these payloads (0: an empty PDU); false, and nothing spent,
  /// when it does not fit.
  public mutating func fit(central: Int, peripheral: Int) -> Bool {
    if let packetLimit, exchanges >= packetLimit { return false }
    let start = exchanges == 0 ? 0 : used + AirTime.interFrameSpace
    let end = start + air.exchangeMicroseconds(central: central, peripheral: peripheral)
    if airLimited, let slot = air.slotMicroseconds, end + AirTime.interFrameSpace > slot { return false }
    if airLimited, exchanges > 0, end > air.eventMicroseconds { return false }
    used = end
    exchanges += 1
    return true
  }
}
