/// What a link on a shared radio (`SharedRadio`) needs of the air in its connection events, as its
/// central's queues say at an event's start. A real controller runs every connected link's events;
/// what an event costs the air is what it carries: a link with data to send fills its event to its
/// packet limit, one that only asks and answers (an ATT request, a response, a notification) carries
/// an exchange, and one that waits (for a commit, a check, a verdict) carries an empty packet each
/// way, a few hundred microseconds. The radio's plan gives each link the slot its need takes and the
/// rest of the interval to the links that send.
public enum RadioNeed: Int, Comparable, Sendable, CustomStringConvertible {
  /// Nothing queued either way: each event an empty exchange.
  case waiting
  /// ATT requests or answers queued, no data: each event one exchange of the longest packets.
  case talking
  /// Data to send: each event at the link's packet limit.
  case sending

  public static func < (lhs: RadioNeed, rhs: RadioNeed) -> Bool { lhs.rawValue < rhs.rawValue }

  public var description: String {
    switch self {
    case .waiting: "waiting"
    case .talking: "talking"
    case .sending: "sending"
    }
  }
}

extension AirTime {
  /// The radio time one of this link's events takes for `need`, µs, without the turnaround after
  /// it: the full event at the packet limit for a link that sends, one exchange of the longest
  /// packets both ways for one that talks (any request and its answer fit), an empty exchange for
  /// one that waits.
  public func eventMicroseconds(for need: RadioNeed) -> Double {
    switch need {
    case .sending: fullEventMicroseconds
    case .talking: exchangeMicroseconds(central: dataLength, peripheral: dataLength)
    case .waiting: exchangeMicroseconds(central: 0, peripheral: 0)
    }
  }
}
