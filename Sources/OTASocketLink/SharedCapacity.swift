/// What links that share one radio (`SharedRadio`) can carry together: the plan the radio runs them
/// by, and the capacity it leaves each of them, in the style of `valueBytesPerSecond`.
///
/// With n links on one radio (same conditions) the controller staggers their anchors evenly across
/// one interval and gives each link's event a slot of interval / n. The interval is the conditions'
/// own, unless n of the link's events at their packet limit (full packets, empty answers) would not
/// fit in it: then the smallest interval, in 1.25 ms units, that holds n such events, each followed
/// by T_IFS before the next link's event begins. A slot is never cut below what the link's packet
/// limit uses (nor below one exchange of the longest packets both ways), and the slots of one
/// interval add up to at most the interval: together the links never carry more than one radio's
/// air. This is what multi-link centrals do (Nordic's SoftDevice: the interval at least the sum of
/// the links' event lengths).
///
/// The T_IFS after each event is the model's radio turnaround between two links' events. Without it
/// n events at the packet limit, each ending its last exchange without the T_IFS that `cost` counts
/// after every write, pack more writes into an interval than the radio carries back to back
/// (`continuousBytesPerSecond`): 8 links of the defaults would carry 176.8 kB/s, over the 175.3 kB/s
/// limit.
extension AirTime {
  /// The unit of connection intervals: 1.25 ms.
  public static let intervalUnit = Duration.microseconds(1250)

  /// The interval a radio shared by `links` links of these conditions runs them at: the conditions'
  /// own for one link (or when air time does not pace the link), else the smallest interval, in
  /// 1.25 ms units, that holds `links` events of `fullEventMicroseconds` each followed by T_IFS, and
  /// never shorter than the conditions' interval.
  public func sharedInterval(links: Int) -> Duration {
    let own = conditions.connectionInterval
    guard links > 1, conditions.airTimePacing else { return own }
    let needed = Double(links) * (fullEventMicroseconds + Self.interFrameSpace)
    let unit = Self.microseconds(Self.intervalUnit)
    let units = Int64((needed / unit).rounded(.up))
    return max(own, Self.intervalUnit * units)
  }

  /// The payload bytes per second `links` links of these conditions carry together on one radio,
  /// each in its slot of `sharedInterval(links:)`, on the data path the conditions use (GATT writes
  /// as `rawPayloadBytesPerSecond` picks them, or the L2CAP channel): `dataPathBytesPerSecond` for
  /// one link.
  public func sharedCapacityBytesPerSecond(links: Int) -> Double {
    guard links > 1 else { return dataPathBytesPerSecond }
    return Double(links) * sharing(links: links).dataPathBytesPerSecond
  }

  /// The air of one of `links` links on one radio, as the plan runs it: its interval the shared
  /// one, its events held to a slot of interval / links. Itself for one link.
  public func sharing(links: Int) -> AirTime {
    sharing(links: links, interval: sharedInterval(links: links))
  }

  /// The air of one of `links` links on a radio running them at `interval`.
  func sharing(links: Int, interval: Duration) -> AirTime {
    sharing(links: links, interval: interval, slot: Self.microseconds(interval) / Double(links))
  }

  /// The air of one of `links` links on a radio running them at `interval`, its slot `slot` µs.
  func sharing(links: Int, interval: Duration, slot: Double) -> AirTime {
    guard links > 1 else { return self }
    var shared = conditions
    shared.connectionInterval = interval
    return AirTime(shared, slotMicroseconds: slot)
  }

  /// The radio time one of this link's events takes at its packet limit, µs, with full packets
  /// and empty answers (and never less than one exchange of full packets both ways, so that a
  /// slot that holds it holds any one exchange): what a shared radio must leave each link.
  public var fullEventMicroseconds: Double {
    var event = ConnectionEvent(link: AirTime(conditions))
    while event.fit(central: dataLength, peripheral: 0) {}
    return max(event.used, exchangeMicroseconds(central: dataLength, peripheral: dataLength))
  }
}
