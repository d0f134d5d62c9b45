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
/// Link k (in the order they connected, the first 0) has its events at the radio's origin (when
/// the first of the links now connected joined) + k × slot + whole intervals, so the real-time
/// loop does not run all links' events at the same instant. An event set before the plan changed
/// that is no longer at one of its link's slot starts does not happen: the link waits for its slot.
///
/// For one thread: the poll loop that drives all its links.
public final class SharedRadio {
  /// The radio's plan while links are connected.
  public struct Plan: Equatable, Sendable {
    /// The links connected.
    public let links: Int
    /// The interval they all run at.
    public let interval: Duration
    /// Each link's slot, µs: interval / links.
    public let slotMicroseconds: Double
  }

  /// A connected link: the air it would have alone, and its air under the plan.
  private struct Member {
    let id: ObjectIdentifier
    let alone: AirTime
    var shared: AirTime
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

  public init() {}

  /// The links connected now.
  public var linksConnected: Int { members.count }

  // MARK: For the links

  /// A link connected at `time`, its air `air` when alone: the plan takes it in. Returns when its
  /// first event is (its slot's first start at or after `time`).
  func join(_ id: ObjectIdentifier, air: AirTime, at time: Duration) -> Duration {
    leave(id)
    if members.isEmpty { origin = time }
    members.append(Member(id: id, alone: air, shared: air))
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
    guard let plan, let index = members.firstIndex(where: { $0.id == id }) else { return nil }
    let interval = Self.nanoseconds(plan.interval)
    guard interval > 0 else { return time }
    let anchor = Self.nanoseconds(origin) + interval * Int64(index) / Int64(plan.links)
    let since = Self.nanoseconds(time) - anchor
    guard since > 0 else { return .nanoseconds(anchor) }
    return .nanoseconds(anchor + (since + interval - 1) / interval * interval)
  }

  /// A link's event used `microseconds` of radio time.
  func record(airMicroseconds microseconds: Double) {
    airMicroseconds += microseconds
    connectionEvents += 1
  }

  // MARK: The plan

  private func replan() {
    guard !members.isEmpty else {
      plan = nil
      return
    }
    let links = members.count
    let interval = members.map { $0.alone.sharedInterval(links: links) }.max() ?? .zero
    for index in members.indices {
      members[index].shared = members[index].alone.sharing(links: links, interval: interval)
    }
    plan = Plan(
      links: links, interval: interval,
      slotMicroseconds: AirTime.microseconds(interval) / Double(links))
  }

  private static func nanoseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
  }
}
