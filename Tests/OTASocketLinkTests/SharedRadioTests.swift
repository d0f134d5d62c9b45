import Foundation
import OTALink
import OTASystem
import OTAWire
import Testing

@testable import OTASocketLink

/// Links that share one radio (`SharedRadio`): the plan's interval and slots, the capacity it leaves
/// them, and simulated centrals against socket peripherals that together carry no more than one
/// radio's air.
@Suite struct SharedRadioTests {
  static func air(_ spec: String) throws -> AirTime { AirTime(try LinkConditions(spec: spec)) }

  /// Conditions across PHYs, packet limits, event lengths, encryption and both data paths.
  static let specs = [
    "", "mtu=517", "packets=1000", "mtu=517,packets=1000", "phy=1M", "phy=1M,packets=1000",
    "mtu=23,dle=off", "dle=off,packets=1000", "interval=7.5ms,packets=3", "interval=50ms,packets=1000",
    "encrypt=on", "event=3.75ms,packets=1000", "coc=4100", "coc=4100,packets=1000,credits=1000",
    "phy=coded", "phy=coded-s2,interval=7.5ms",
  ]

  static let linkCounts = [2, 3, 4, 8]

  // MARK: The plan and its capacity

  @Test func oneLinkIsTheSingleLinkFigure() throws {
    for spec in Self.specs {
      let air = try Self.air(spec)
      #expect(air.sharedInterval(links: 1) == air.conditions.connectionInterval, "\(spec)")
      #expect(air.sharing(links: 1).slotMicroseconds == nil, "\(spec)")
      #expect(air.sharedCapacityBytesPerSecond(links: 1) == air.dataPathBytesPerSecond, "\(spec)")
    }
  }

  @Test func theIntervalGrowsToHoldEveryLinksEvent() throws {
    // 6 exchanges of a full packet and an empty one: 6 × 1392 − 150 = 8202 µs, 8352 with the
    // turnaround after it.
    let defaults = AirTime(LinkConditions())
    #expect(defaults.fullEventMicroseconds == 8202)
    #expect(defaults.sharedInterval(links: 2) == .microseconds(17_500), "16 704 µs: 14 units")
    #expect(defaults.sharedInterval(links: 4) == .microseconds(33_750), "33 408 µs: 27 units")
    #expect(defaults.sharedInterval(links: 8) == .microseconds(67_500), "66 816 µs: 54 units")
    // Two packets per event: 2784 µs each, five fit in 15 ms, a sixth needs 17.5 ms.
    let short = try Self.air("packets=2")
    #expect(short.sharedInterval(links: 5) == .milliseconds(15))
    #expect(short.sharedInterval(links: 6) == .microseconds(17_500))
    // Everywhere: never shorter than the link's own, and when longer, the smallest 1.25 ms
    // multiple that holds n events and their turnarounds.
    let unit = AirTime.microseconds(AirTime.intervalUnit)
    for spec in Self.specs {
      let air = try Self.air(spec)
      for links in 2...8 {
        let interval = air.sharedInterval(links: links)
        let micro = AirTime.microseconds(interval)
        let needed = Double(links) * (air.fullEventMicroseconds + AirTime.interFrameSpace)
        #expect(interval >= air.conditions.connectionInterval, "\(spec), \(links) links")
        #expect(micro >= needed, "\(spec), \(links) links")
        if interval > air.conditions.connectionInterval {
          #expect(micro.truncatingRemainder(dividingBy: unit) == 0, "\(spec), \(links) links: \(interval)")
          #expect(micro - unit < needed, "\(spec), \(links) links: \(interval) is not the smallest")
        }
      }
    }
  }

  @Test func linksTogetherNeverCarryMoreThanOneRadio() throws {
    for spec in Self.specs {
      let air = try Self.air(spec)
      for links in Self.linkCounts {
        // One link with the whole radio at the same interval: its event the whole interval, no
        // packet limit.
        var whole = air.conditions
        whole.connectionInterval = air.sharedInterval(links: links)
        whole.eventLength = nil
        let ceiling = AirTime(whole).physicalCeilingBytesPerSecond
        let together = air.sharedCapacityBytesPerSecond(links: links)
        #expect(together <= ceiling, "\(spec), \(links) links: \(together) B/s, one radio \(ceiling)")
      }
    }
  }

  @Test func eachLinkGetsItsFairShareWithinOneExchange() throws {
    for spec in Self.specs {
      let air = try Self.air(spec)
      let alone = Self.fullExchanges(air)
      for links in Self.linkCounts {
        let shared = air.sharing(links: links)
        let slot = try #require(shared.slotMicroseconds)
        #expect(Double(links) * slot <= shared.intervalMicroseconds, "\(spec), \(links) links")
        // The slot is never cut below what the link's packet limit uses.
        let exchanges = Self.fullExchanges(shared)
        #expect(exchanges >= alone && exchanges <= alone + 1, "\(spec), \(links): \(exchanges) vs \(alone)")
        let share = air.sharedCapacityBytesPerSecond(links: links) / Double(links)
        #expect(abs(share - shared.dataPathBytesPerSecond) <= share * 1e-12, "\(spec), \(links) links")
      }
    }
  }

  /// The defaults (MTU 247, 15 ms, 6 packets per event, 2M, DLE): one link carries 97.6 kB/s; two,
  /// four and eight links on one radio at 17.5, 33.75 and 67.5 ms carry 167.3, 173.5 and 173.5 kB/s
  /// together, more than one link alone without a packet limit (165 kB/s at 15 ms, where 1230 µs
  /// of each interval go unused) and less than the radio carries back to back (175.3 kB/s).
  @Test func atTheDefaultsLinksTogetherReachTheRadiosCeiling() {
    let air = AirTime(LinkConditions())
    let ceiling = air.physicalCeilingBytesPerSecond
    #expect(abs(ceiling - 5 * 495 / 0.015) < 5)
    #expect(abs(air.sharedCapacityBytesPerSecond(links: 1) - 6 * 244 / 0.015) < 1)
    for (links, interval) in [(2, 0.0175), (4, 0.03375), (8, 0.0675)] {
      let together = air.sharedCapacityBytesPerSecond(links: links)
      #expect(abs(together - Double(links * 6 * 244) / interval) < 1, "\(links) links: \(together)")
      #expect(together >= 0.9 * ceiling, "\(links) links: \(together) B/s, ceiling \(ceiling)")
      #expect(together <= air.continuousBytesPerSecond(valueLength: 244), "\(links) links")
    }
  }

  /// Full packets with empty answers that fit in one of the link's events.
  static func fullExchanges(_ air: AirTime) -> Int {
    var event = ConnectionEvent(link: air)
    while event.fit(central: air.dataLength, peripheral: 0) {}
    return event.exchanges
  }

  // MARK: The radio's plan as links come and go

  final class Token {}

  @Test func theSlotsOfOneIntervalNeverAddUpToMoreThanIt() throws {
    let radio = SharedRadio()
    let mixed = ["", "packets=1000", "phy=1M", "interval=50ms,packets=2", "phy=coded", "coc=4100"]
    let tokens = (0..<12).map { _ in Token() }
    var airs: [ObjectIdentifier: AirTime] = [:]
    for (index, token) in tokens.enumerated() {
      let air = try Self.air(mixed[index % mixed.count])
      let id = ObjectIdentifier(token)
      airs[id] = air
      let first = radio.join(id, air: air, at: .milliseconds(index), need: .sending)
      #expect(first >= .milliseconds(index))
      try Self.check(radio, airs)
    }
    #expect(radio.linksConnected == 12 && radio.peakLinks == 12)
    for token in tokens.enumerated().filter({ $0.offset % 3 != 0 }).map(\.element) {
      radio.leave(ObjectIdentifier(token))
      airs[ObjectIdentifier(token)] = nil
      try Self.check(radio, airs)
    }
    #expect(radio.linksConnected == 4 && radio.peakLinks == 12)
    for id in airs.keys { radio.leave(id) }
    #expect(radio.plan == nil && radio.linksConnected == 0)
  }

  /// The plan for these links: slots that add up to at most the interval, each holding its link's
  /// event at its packet limit and the turnaround after it.
  static func check(_ radio: SharedRadio, _ airs: [ObjectIdentifier: AirTime]) throws {
    let plan = try #require(radio.plan)
    #expect(plan.links == airs.count && radio.linksConnected == airs.count)
    let interval = AirTime.microseconds(plan.interval)
    #expect(Double(plan.links) * plan.slotMicroseconds <= interval, "\(plan)")
    for (id, alone) in airs {
      let shared = try #require(radio.air(of: id))
      #expect(plan.interval >= alone.conditions.connectionInterval, "\(plan)")
      guard plan.links > 1 else { continue }
      #expect(shared.slotMicroseconds == plan.slotMicroseconds)
      #expect(
        alone.fullEventMicroseconds + AirTime.interFrameSpace <= plan.slotMicroseconds,
        "\(alone.conditions): \(plan)")
    }
  }

  // MARK: Centrals on one radio against socket peripherals

  /// Alone on its radio a link runs as without one, carrying its normal rate. Two links on one radio
  /// keep their events whole but take turns: in every interval their events, each with its
  /// turnaround, fit in the interval, and together they carry no more than the radio carries back
  /// to back. Without the shared radio the same two links would carry twice that.
  @Test func twoLinksOnOneRadioCarryOneRadiosAir() throws {
    // Air-bound: 10 writes of 244 bytes fill a 15 ms event (13 770 µs).
    let spec = "packets=1000,queue=1000"
    let conditions = try LinkConditions(spec: spec)
    let own = try Rig(links: 1, spec: spec, radio: nil)
    try own.connect(0)
    try own.run(until: .milliseconds(300))
    let alone = try Rig(links: 1, spec: spec, radio: SharedRadio())
    try alone.connect(0)
    try alone.run(until: .milliseconds(300))
    #expect(alone.events.count == 19, "events at 15, 30, … 285 ms")
    #expect(alone.events.allSatisfy { $0.writes == 10 }, "\(alone.events.map(\.writes))")
    #expect(alone.events.map(\.time) == own.events.map(\.time))
    #expect(alone.events.map(\.writes) == own.events.map(\.writes))

    let radio = SharedRadio()
    let pair = try Rig(links: 2, spec: spec, radio: radio)
    try pair.connect(0)
    try pair.connect(1)
    #expect(radio.linksConnected == 2 && radio.peakLinks == 2)
    // A new link talks in its first event (a connection opens with requests); from its second on
    // both links send, and the plan is theirs.
    try pair.run(until: .milliseconds(40))
    let plan = try #require(radio.plan)
    #expect(plan.interval == .microseconds(28_750), "2 × (13 770 + 150) µs: 23 units of 1.25 ms")
    let from = try #require(pair.events.last { $0.link == 0 }).time
    let end = from + plan.interval * 20
    try pair.run(until: end)
    let steady = pair.events.filter { $0.time >= from + plan.interval }
    #expect(steady.count == 38)
    #expect(steady.allSatisfy { $0.writes == 10 }, "\(steady.map(\.writes))")
    let perLink = (0..<2).map { link in steady.filter { $0.link == link }.map(\.writes).reduce(0, +) }
    #expect(perLink[0] == perLink[1], "\(perLink)")
    #expect(Self.offsets(pair.events, after: from) == [1: .microseconds(14_375)], "a slot after link 0")
    #expect(
      Self.airPerInterval(pair.events.filter { $0.time >= from }, plan.interval, from: from).allSatisfy {
        $0 <= 28_750
      })

    let oneRadio = AirTime(conditions).continuousBytesPerSecond(valueLength: 244)
    let together = Self.rate(steady, from: from + plan.interval, to: end)
    #expect(together <= oneRadio, "\(together) B/s, one radio \(oneRadio)")
    let planned = AirTime(conditions).sharedCapacityBytesPerSecond(links: 2)
    #expect(abs(together - planned) / planned < 0.001, "\(together) B/s, planned \(planned)")

    let separate = try Rig(links: 2, spec: spec, radio: nil)
    try separate.connect(0)
    try separate.connect(1)
    try separate.run(until: end)
    let twoRadios = Self.rate(
      separate.events.filter { $0.time >= plan.interval }, from: plan.interval, to: end)
    #expect(twoRadios > 1.8 * oneRadio, "without a shared radio: \(twoRadios) B/s")
  }

  /// Short writes fit more exchanges in an event than the plan's full packets do: on a shared radio
  /// the slot cuts the event where it would run into the next link's, and the links still fit in the
  /// interval.
  @Test func theSlotCutsAnEventThatWouldRunIntoTheNextLinks() throws {
    // 20-byte writes, one 27-byte packet each: 346 µs an exchange, 496 with the T_IFS after it.
    // Alone, 30 fit in 15 ms (14 730 µs). On a radio of two the interval is planned for full
    // packets (2 × (13 770 + 150) µs: 28.75 ms) and a slot of 14 375 µs holds 28 (13 888 µs with the
    // turnaround); 30 would run 505 µs into the next link's slot.
    let spec = "mtu=23,packets=1000,queue=1000"
    let alone = try Rig(links: 1, spec: spec, radio: SharedRadio())
    try alone.connect(0, length: 20)
    try alone.run(until: .milliseconds(150))
    #expect(
      !alone.events.isEmpty && alone.events.allSatisfy { $0.writes == 30 }, "\(alone.events.map(\.writes))")

    let radio = SharedRadio()
    let pair = try Rig(links: 2, spec: spec, radio: radio)
    try pair.connect(0, length: 20)
    try pair.connect(1, length: 20)
    try pair.run(until: .milliseconds(40))
    let plan = try #require(radio.plan)
    #expect(plan.interval == .microseconds(28_750))
    let from = try #require(pair.events.last { $0.link == 0 }).time
    try pair.run(until: from + plan.interval * 10)
    let steady = pair.events.filter { $0.time >= from }
    #expect(steady.count == 20)
    #expect(steady.allSatisfy { $0.writes == 28 }, "\(steady.map(\.writes))")
    #expect(Self.airPerInterval(steady, plan.interval, from: from).allSatisfy { $0 <= 28_750 })
  }

  /// Three links on one radio, then two, then one: each time the plan follows from the next event
  /// on, the links that stay take back the air, and their events keep whole (6 writes each).
  @Test func theLinksThatStayTakeTheAirBackWhenOthersLeave() throws {
    let radio = SharedRadio()
    let rig = try Rig(links: 3, spec: "queue=1000", radio: radio)
    for link in 0..<3 { try rig.connect(link) }
    // Each link talks in its first event and sends from its second on.
    try rig.run(until: .milliseconds(40))
    #expect(radio.plan?.interval == .microseconds(26_250), "3 × 8352 µs: 21 units")
    let threeFrom = try #require(rig.events.last { $0.link == 0 }).time
    try rig.run(until: threeFrom + .microseconds(26_250 * 10))
    #expect(Self.spacing(rig.events, link: 0, after: threeFrom) == [.microseconds(26_250)])
    #expect(
      Self.offsets(rig.events, after: threeFrom) == [
        1: .microseconds(8750), 2: .microseconds(17_500),
      ])

    rig.centrals[1].disconnect()
    let twoFrom = rig.clock
    #expect(radio.plan?.interval == .microseconds(17_500) && radio.linksConnected == 2)
    try rig.run(until: twoFrom + .microseconds(17_500 * 10))
    let two = twoFrom + .microseconds(17_500 * 2)
    #expect(Self.spacing(rig.events, link: 0, after: two) == [.microseconds(17_500)])
    #expect(Self.spacing(rig.events, link: 2, after: two) == [.microseconds(17_500)])
    #expect(Self.offsets(rig.events, after: two) == [2: .microseconds(8750)], "link 2 now second")
    #expect(!rig.events.contains { $0.link == 1 && $0.time > twoFrom })

    rig.centrals[2].disconnect()
    let oneFrom = rig.clock
    try rig.run(until: oneFrom + .milliseconds(150))
    #expect(Self.spacing(rig.events, link: 0, after: oneFrom + .milliseconds(30)) == [.milliseconds(15)])
    let sending = rig.events.filter { $0.time >= threeFrom }
    #expect(sending.allSatisfy { $0.writes == 6 }, "\(sending.map(\.writes))")
    // In each phase, every interval of its plan holds its links' events and their turnarounds.
    let three = rig.events.filter { $0.time >= threeFrom && $0.time < twoFrom }
    let pair = rig.events.filter { $0.time >= twoFrom && $0.time < oneFrom }
    #expect(Self.airPerInterval(three, .microseconds(26_250), from: threeFrom).allSatisfy { $0 <= 26_250 })
    #expect(Self.airPerInterval(pair, .microseconds(17_500)).allSatisfy { $0 <= 17_500 })
    #expect(radio.linksConnected == 1 && radio.peakLinks == 3)
    #expect(abs(radio.airMicroseconds - rig.events.map(\.air).reduce(0, +)) < 1e-6)
  }

  /// A link with nothing to send holds the radio only for its empty exchange: the link that sends
  /// runs at its packet limit as if alone (6 writes every 15 ms), where two sending links take
  /// turns at 17.5 ms; the slots still add up to at most the interval, and once the quiet link has
  /// data again the plan is the two sending links' again.
  @Test func aLinkThatWaitsLeavesTheAirToTheLinkThatSends() throws {
    let radio = SharedRadio()
    let rig = try Rig(links: 2, spec: "queue=1000", radio: radio)
    try rig.connect(0, writes: 1000)
    try rig.connect(1, writes: 0)
    try rig.run(until: .milliseconds(100))
    let ids = rig.centrals.map { ObjectIdentifier($0) }
    #expect(radio.need(of: ids[0]) == .sending && radio.need(of: ids[1]) == .waiting)
    let plan = try #require(radio.plan)
    #expect(plan.interval == .milliseconds(15), "8352 + 388 µs fit in the link's own 15 ms")
    let idle = AirTime(rig.conditions).exchangeMicroseconds(central: 0, peripheral: 0)
    #expect(abs(plan.slotMicroseconds - (15_000 - idle - AirTime.interFrameSpace)) < 1e-6)
    let from = rig.clock
    try rig.run(until: from + .milliseconds(150))
    let sending = rig.events.filter { $0.time >= from && $0.link == 0 }
    #expect(sending.count == 10 && sending.allSatisfy { $0.writes == 6 }, "\(sending.map(\.writes))")
    #expect(Self.spacing(rig.events, link: 0, after: from) == [.milliseconds(15)])
    #expect(
      Self.airPerInterval(rig.events.filter { $0.time >= from }, .milliseconds(15)).allSatisfy {
        $0 <= 15_000
      })

    // Data for the quiet link: from its next event on both send, at the two links' 17.5 ms.
    for _ in 0..<400 { rig.centrals[1].writeData(Array(repeating: 0xA5, count: 244)) }
    try rig.run(until: rig.clock + .milliseconds(100))
    #expect(radio.need(of: ids[1]) == .sending)
    #expect(radio.plan?.interval == .microseconds(17_500))
    let both = rig.clock
    try rig.run(until: both + .microseconds(17_500 * 10))
    #expect(Self.spacing(rig.events, link: 0, after: both) == [.microseconds(17_500)])
    #expect(Self.spacing(rig.events, link: 1, after: both) == [.microseconds(17_500)])
    #expect(rig.events.filter { $0.time >= both }.allSatisfy { $0.writes == 6 })
  }

  /// The gaps between a link's events after `time`, each once.
  static func spacing(_ events: [Rig.Event], link: Int, after time: Duration) -> Set<Duration> {
    let times = events.filter { $0.link == link && $0.time >= time }.map(\.time)
    return Set(zip(times, times.dropFirst()).map { $1 - $0 })
  }

  /// How long after link 0's latest event each other link's event after `time` comes.
  static func offsets(_ events: [Rig.Event], after time: Duration) -> [Int: Duration] {
    var anchor: Duration?
    var offsets: [Int: Set<Duration>] = [:]
    for event in events where event.time >= time {
      if event.link == 0 {
        anchor = event.time
      } else if let anchor {
        offsets[event.link, default: []].insert(event.time - anchor)
      }
    }
    return offsets.compactMapValues { $0.count == 1 ? $0.first : nil }
  }

  /// Radio time used in each interval of `interval` from zero: each event's, and the turnaround
  /// after it.
  static func airPerInterval(_ events: [Rig.Event], _ interval: Duration, from origin: Duration = .zero)
    -> [Double]
  {
    var used: [Int: Double] = [:]
    for event in events {
      used[Int(((event.time - origin) / interval).rounded(.down)), default: 0] +=
        event.air + AirTime.interFrameSpace
    }
    return Array(used.values)
  }

  /// Value bytes per second (writes of 244 bytes) the events carried from `start` to `end`.
  static func rate(_ events: [Rig.Event], from start: Duration, to end: Duration) -> Double {
    Double(events.map(\.writes).reduce(0, +) * 244) / AirTime.microseconds(end - start) * 1e6
  }

  /// Centrals, each against a socket peripheral of its own, driven in simulated time by one loop as
  /// a push to several devices drives them; records what each connection event carried.
  final class Rig {
    struct Event {
      let time: Duration
      let link: Int
      /// Data writes that reached the link's device.
      let writes: Int
      /// Radio time the event used, µs (0 without a shared radio).
      let air: Double
    }

    let conditions: LinkConditions
    let peripherals: [SocketPeripheral]
    let centrals: [SocketCentral]
    let radio: SharedRadio?
    private(set) var events: [Event] = []
    private(set) var clock: Duration = .zero

    init(links: Int, spec: String, radio: SharedRadio?) throws {
      let conditions = try LinkConditions(spec: spec)
      var peripherals: [SocketPeripheral] = []
      var centrals: [SocketCentral] = []
      for _ in 0..<links {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
          "radio-\(UUID().uuidString).sock"
        ).path
        peripherals.append(try SocketPeripheral(path: path, conditions: conditions, limits: .init()))
        centrals.append(SocketCentral(path: path, conditions: conditions, radio: radio))
      }
      self.conditions = conditions
      self.peripherals = peripherals
      self.centrals = centrals
      self.radio = radio
    }

    /// Connects a link now and queues `writes` writes of `length` bytes on it.
    func connect(_ link: Int, length: Int = 244, writes: Int = 400) throws {
      let central = centrals[link]
      central.connect(now: clock)
      _ = try deviceWrites(link)
      let ready = try Poller.wait(for: central.descriptors, timeout: .milliseconds(50))
      let events = central.service(readable: ready, now: clock)
      #expect(events.contains(.connected(mtu: ATTMTU(clamping: conditions.mtu))), "\(events)")
      for _ in 0..<writes { central.writeData(Array(repeating: 0xA5, count: length)) }
    }

    /// Runs every link's connection events due before `end`, in time order.
    func run(until end: Duration) throws {
      while let due = centrals.compactMap(\.nextDeadline).min(), due < end {
        clock = max(clock, due)
        for (link, central) in centrals.enumerated() {
          guard let deadline = central.nextDeadline, deadline <= clock else { continue }
          let ran = central.connectionEvents
          let airBefore = radio?.airMicroseconds ?? 0
          let ready = try Poller.wait(for: central.descriptors, timeout: .zero)
          _ = central.service(readable: ready, now: clock)
          let writes = try deviceWrites(link)
          guard central.connectionEvents > ran else { continue }
          let air = (radio?.airMicroseconds ?? 0) - airBefore
          events.append(Event(time: clock, link: link, writes: writes, air: air))
        }
      }
      clock = max(clock, end)
    }

    /// Data writes that have reached a link's device since last asked.
    func deviceWrites(_ link: Int) throws -> Int {
      let peripheral = peripherals[link]
      var writes = 0
      while true {
        let ready = try Poller.wait(
          for: peripheral.descriptors, writable: peripheral.writeDescriptors, timeout: .zero)
        let events = try peripheral.service(readable: ready, now: clock) { _, _ in [] }
        writes += events.filter { if case .dataWrite = $0 { true } else { false } }.count
        if events.isEmpty && ready.isEmpty { return writes }
      }
    }
  }
}
