/// One central's radio, shared by the simulated links (`SocketCentral`) it holds: a central with
/// several devices connected has one radio, so its links' connection events interleave and N links
/// together never carry more than one link's air.
///
/// The model, as `sharedInterval(links:)` plans it: with n links connected, the controller staggers
/// their anchors evenly across the interval and gives each link's event a slot of interval / n; an
/// exchange happens only if it ends, with T_IFS to spare before the next link's event, within its
/// link's slot (the link's own event length and packet limit still apply). When n events at the
/// packet limit would not fit in the links' interval, the radio uses the smallest interval, in
/// 1.25 ms units, that holds them, never shorter than the conditions' interval (multi-link centrals
/// such as Nordic's SoftDevice keep the interval at least the sum of the links' event lengths).
/// The slots of one interval add up to at most the interval. Links on one radio share one interval:
/// with different conditions, the longest any of them needs. When links come and go the plan
/// changes at once and each link follows it from its next event on.
///
/// A link's slot follows what it needs of the air (`RadioNeed`, from its queues at each event's
/// start): a link with data to send has the slot above, one that only asks and answers a slot of
/// one exchange of the longest packets, and one that waits (for a commit, the device's check, its
/// restart's verdict) a slot of its empty exchange, each with T_IFS after it; the links that send
/// share the rest of the interval, and the interval holds all the slots. A link joins as one that
/// talks (a new connection's first events carry the link layer's procedures and the ATT requests
/// that open a push, never data); from its second event on, its need is told at each event's
/// start, from what its central has queued; that event runs in the smaller of its old and new slots (what does not fit
/// waits for the next event), and the slots' grid moves with the link's new slot, which begins at
/// that event's start when the need shrank and where the old slot ended when it grew.
///
/// Link k (in the order they connected, the first 0) has its events at the radio's origin (when
/// the first of the links now connected joined) + the slots of the links before it + whole
/// intervals, so the real-time loop does not run all links' events at the same instant. When the
/// plan changes, each link's next event moves to its new slot's first start after both its own
/// last event and the last event any link ran on the radio (`generation` tells a link that the
/// plan changed): no two events overlap, before or after the change.
///
/// For one thread: the poll loop that drives all its links.
public final class SharedRadio {
  /// The radio's plan while links are connected.
  public struct Plan: Equatable, Sendable {
    /// The links connected.
    public let links: Int
    /// The interval they all run at.
    public let interval: Duration
    /// The slot of each link that sends, µs: interval / links when every link sends.
    public let slotMicroseconds: Double
  }

  /// A connected link: the air it would have alone, and its air under the plan.
  private struct Member {
    let id: ObjectIdentifier
    let alone: AirTime
    var shared: AirTime
    var need = RadioNeed.sending
    /// Where its slot starts in the interval, ns after the origin's.
    var offset: Int64 = 0
  }

  private var members: [Member] = []
  /// Where the slots' grid starts: when the first of the links now connected joined.
  private var origin: Duration = .zero
  /// The plan now; nil with no link connected.
  public private(set) var plan: Plan?
  /// The most links connected at once.
  public private(set) var peakLinks = 0
  /// Radio time all links' connection events have used, µs (each event from its start to the end
  /// of its last exchange).
  public private(set) var airMicroseconds = 0.0
  /// Connection events all links have run.
  public private(set) var connectionEvents = 0
  /// Counts the plan's changes: a link whose last look was at another generation moves its next
  /// event into its new slot.
  public private(set) var generation = 0
  /// When the air is free again: the end of the last event any link ran, and T_IFS after it.
  public private(set) var freeAt: Duration = .zero

  public init() {}

  /// The links connected now.
  public var linksConnected: Int { members.count }

  // MARK: For the links

  /// A link connected at `time`, its air `air` when alone, needing `need` of the air at first: the
  /// plan takes it in. Returns when its first event is (its slot's first start at or after `time`).
  func join(_ id: ObjectIdentifier, air: AirTime, at time: Duration, need: RadioNeed) -> Duration {
    leave(id)
    if members.isEmpty { origin = time }
    members.append(Member(id: id, alone: air, shared: air, need: need))
    peakLinks = max(peakLinks, members.count)
    replan()
    return slotStart(of: id, atOrAfter: time) ?? time
  }

  /// A link disconnected: the others share the radio from their next events on.
  func leave(_ id: ObjectIdentifier) {
    guard let index = members.firstIndex(where: { $0.id == id }) else { return }
    members.remove(at: index)
    replan()
  }

  /// The air of a connected link under the plan now; nil for a link not connected.
  func air(of id: ObjectIdentifier) -> AirTime? {
    members.first { $0.id == id }?.shared
  }

  /// When a connected link's next event is, after one at `time`: its slot's next start; nil for a
  /// link not connected.
  func nextEvent(of id: ObjectIdentifier, after time: Duration) -> Duration? {
    slotStart(of: id, atOrAfter: time + .nanoseconds(1))
  }

  /// The first start of a connected link's slot at or after `time` (`time` itself when an event
  /// set then is in the plan now); nil for a link not connected.
  func slotStart(of id: ObjectIdentifier, atOrAfter time: Duration) -> Duration? {
    guard let plan, let member = members.first(where: { $0.id == id }) else { return nil }
    let interval = Self.nanoseconds(plan.interval)
    guard interval > 0 else { return time }
    let anchor = Self.nanoseconds(origin) + member.offset
    let since = Self.nanoseconds(time) - anchor
    guard since > 0 else { return .nanoseconds(anchor) }
    return .nanoseconds(anchor + (since + interval - 1) / interval * interval)
  }

  /// A link's event at `start` used `microseconds` of radio time.
  func record(airMicroseconds microseconds: Double, at start: Duration = .zero) {
    airMicroseconds += microseconds
    connectionEvents += 1
    let end = start + .nanoseconds(Int64(((microseconds + AirTime.interFrameSpace) * 1000).rounded(.up)))
    freeAt = max(freeAt, end)
  }

  /// What a connected link needs of the air now, as its queues said at an event's start: the plan
  /// changes when the need does.
  /// `slotAt`: where the link's new slot begins (the grid moves with it), for a change found at an
  /// event's start: that event's start when the need shrinks (the event keeps to the new slot), the
  /// end of its old slot when it grows (the event keeps to the old one).
  func setNeed(_ need: RadioNeed, of id: ObjectIdentifier, slotAt start: Duration? = nil) {
    guard let index = members.firstIndex(where: { $0.id == id }), members[index].need != need else { return }
    members[index].need = need
    replan()
    if let start { origin = .nanoseconds(Self.nanoseconds(start) - members[index].offset) }
  }

  /// The need the plan holds for a connected link.
  public func need(of id: ObjectIdentifier) -> RadioNeed? { members.first { $0.id == id }?.need }

  // MARK: The plan

  private func replan() {
    generation += 1
    guard !members.isEmpty else {
      plan = nil
      return
    }
    let links = members.count
    let senders = members.filter { $0.need == .sending }
    // Every link sends: the plan of `sharedInterval(links:)`, slots of interval / links.
    var interval = members.map { $0.alone.sharedInterval(links: links) }.max() ?? .zero
    var others = 0.0
    if links > 1, senders.count < links {
      // The links that do not send hold the slots of their events; those that send share the rest,
      // each slot holding the longest of their events at the packet limit.
      others = members.filter { $0.need != .sending }.reduce(0) {
        $0 + $1.alone.eventMicroseconds(for: $1.need) + AirTime.interFrameSpace
      }
      let sending = senders.map { $0.alone.fullEventMicroseconds + AirTime.interFrameSpace }.max() ?? 0
      let needed = others + Double(senders.count) * sending
      let unit = AirTime.microseconds(AirTime.intervalUnit)
      let own = members.map(\.alone.conditions.connectionInterval).max() ?? .zero
      interval = max(own, AirTime.intervalUnit * Int64((needed / unit).rounded(.up)))
    }
    let whole = AirTime.microseconds(interval)
    let slot = senders.isEmpty ? 0 : (whole - others) / Double(senders.count)
    var offset = 0.0
    for index in members.indices {
      let need = members[index].need
      let mine =
        links == 1
        ? whole
        : senders.count == links
          ? whole / Double(links)
          : need == .sending
            ? slot : members[index].alone.eventMicroseconds(for: need) + AirTime.interFrameSpace
      // Every link sending: link k's slot at interval × k / links, as `sharedInterval(links:)` plans.
      members[index].offset =
        senders.count == links
        ? Self.nanoseconds(interval) * Int64(index) / Int64(links) : Int64((offset * 1000).rounded(.up))
      offset += mine
      members[index].shared = members[index].alone.sharing(links: links, interval: interval, slot: mine)
    }
    plan = Plan(
      links: links, interval: interval,
      slotMicroseconds: senders.count == links ? whole / Double(links) : slot)
  }

  private static func nanoseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
  }
}
