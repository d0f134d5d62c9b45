import OTAWire

/// The faults a device has been asked for, and how often each has fired: pure, the daemon asks it
/// at each moment a fault could be due (a request, a data write, an answer, a trial's start) and
/// carries out what fires. Kept in the state directory between restarts (`encoded`), so that a
/// fault that fires once fires once, even when what it does is a restart.
public struct FaultBook: Equatable, Sendable {
  /// The most faults at once: a control client cannot grow the book without bound.
  public static let capacity = 32

  /// Where a fault came from: the configuration (`[faults] set`, `--fault`: set again at each start
  /// unless already there) or the fault control (`otad fault add`: kept until cleared).
  public enum Origin: String, Equatable, Sendable {
    case configuration
    case control
  }

  public struct Entry: Equatable, Sendable {
    public let id: Int
    public let fault: Fault
    public let origin: Origin
    /// How many times it has fired.
    public internal(set) var fired: UInt32
    /// How many chances it has drawn (a chance fault).
    public internal(set) var draws: UInt64

    /// It has fired as often as it may.
    public var spent: Bool {
      switch fault.firing {
      case .times(let count): fired >= count
      case .always: false
      case .chance(_, _, let times): times.map { fired >= $0 } ?? false
      }
    }
  }

  /// A fault that fired: which, and the how-many-th time.
  public struct Fired: Equatable, Sendable, CustomStringConvertible {
    public let id: Int
    public let fault: Fault
    public let count: UInt32

    public var description: String { "fault \(id) fired (\(count)\(limit)): \(fault)" }

    private var limit: String {
      switch fault.firing {
      case .times(let times): " of \(times)"
      case .chance(_, _, let times?): " of at most \(times)"
      default: ""
      }
    }
  }

  /// How far an update has come when a fault might be due: where the data write (or, for a request,
  /// the committed data) ends, and the image's size when the device knows it.
  public struct Progress: Equatable, Sendable {
    public var end: UInt64
    public var imageSize: UInt64?

    public init(end: UInt64, imageSize: UInt64?) {
      self.end = end
      self.imageSize = imageSize
    }

    public static let start = Progress(end: 0, imageSize: nil)
  }

  /// A moment a fault may be due at.
  public enum Moment: Equatable, Sendable {
    /// A request arrived (before the device carries it out).
    case request(FaultRequest, Progress)
    /// A data write arrived: an OTA chunk or operation, or an SMP upload's piece.
    case data(Progress)
    /// An answer to `request` is about to go.
    case answer(FaultRequest?, Progress)
    /// A trial starts (the daemon came up on a slot on trial).
    case trialStarts
  }

  public private(set) var entries: [Entry] = []
  private var nextID = 1

  public init() {}

  public var isEmpty: Bool { entries.isEmpty }

  /// Adds a fault; nil when the book is full.
  @discardableResult
  public mutating func add(_ fault: Fault, origin: Origin = .control) -> Int? {
    guard entries.count < Self.capacity else { return nil }
    let id = nextID
    nextID += 1
    entries.append(Entry(id: id, fault: fault, origin: origin, fired: 0, draws: 0))
    return id
  }

  /// Removes one fault; false when there is none with that id.
  public mutating func remove(id: Int) -> Bool {
    guard let index = entries.firstIndex(where: { $0.id == id }) else { return false }
    entries.remove(at: index)
    return true
  }

  /// Removes every fault; how many there were.
  @discardableResult
  public mutating func clear() -> Int {
    defer { entries.removeAll() }
    return entries.count
  }

  /// The configuration's faults, after a start: those it no longer names go, those it names anew
  /// come (each once, not fired yet); those still named keep what they have fired.
  public mutating func setConfigured(_ faults: [Fault]) {
    var wanted = faults
    entries.removeAll { entry in
      guard entry.origin == .configuration else { return false }
      guard let index = wanted.firstIndex(of: entry.fault) else { return true }
      wanted.remove(at: index)
      return false
    }
    for fault in wanted { add(fault, origin: .configuration) }
  }

  /// The faults due at `moment` that fire, in the order they were set, each counted.
  public mutating func fire(_ moment: Moment) -> [Fired] {
    var fired: [Fired] = []
    for index in entries.indices where !entries[index].spent && Self.isDue(entries[index].fault, at: moment) {
      guard draw(&entries[index]) else { continue }
      entries[index].fired += 1
      fired.append(Fired(id: entries[index].id, fault: entries[index].fault, count: entries[index].fired))
    }
    return fired
  }

  /// The fault's action belongs to the moment, on the request it names, past the point it names.
  static func isDue(_ fault: Fault, at moment: Moment) -> Bool {
    switch (moment, fault.action) {
    case (.request(let request, let progress), .dropLink), (.request(let request, let progress), .refuse),
      (.request(let request, let progress), .restart), (.request(let request, let progress), .powerCut):
      return fault.request == request && passed(fault.after, progress)
    case (.data(let progress), .dropLink), (.data(let progress), .restart), (.data(let progress), .powerCut),
      (.data(let progress), .loseChunk), (.data(let progress), .corruptChunk),
      (.data(let progress), .storageFull):
      return fault.request == nil && passed(fault.after, progress)
    case (.answer(let request, let progress), .delay):
      return (fault.request == nil || fault.request == request) && passed(fault.after, progress)
    case (.trialStarts, .failHealthCheck):
      return true
    default:
      return false
    }
  }

  /// Past the point: the data (or the committed data) ends beyond it. A point at 0, or none, is
  /// passed from the start; a share of an unknown size never is.
  static func passed(_ point: Fault.Point?, _ progress: Progress) -> Bool {
    guard let point else { return true }
    guard let bytes = point.bytes(ofImage: progress.imageSize) else { return false }
    return bytes == 0 || progress.end > bytes
  }

  /// A chance fault draws (from its seed and how many draws it made before); the others always fire.
  private func draw(_ entry: inout Entry) -> Bool {
    guard case .chance(let perMillion, let seed, _) = entry.fault.firing else { return true }
    var generator = SeededGenerator(seed: seed &+ entry.draws &* 0x9E37_79B9_7F4A_7C15)
    entry.draws += 1
    return generator.next() % 1_000_000 < UInt64(perMillion)
  }
}

// MARK: Kept between restarts

extension FaultBook {
  static let header = "otad faults 1"

  /// The book as the state file keeps it: a header, then one line per fault:
  /// `id origin fired draws fault...`.
  public var encoded: String {
    var lines = [Self.header]
    for entry in entries {
      lines.append("\(entry.id) \(entry.origin.rawValue) \(entry.fired) \(entry.draws) \(entry.fault)")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// Reads what `encoded` wrote; a damaged file is refused whole (the daemon then starts from the
  /// configuration's faults alone).
  public init(stored text: String) throws(FaultSpecError) {
    self.init()
    let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
    guard lines.first == Substring(Self.header) else {
      throw FaultSpecError("not a faults file (no '\(Self.header)')")
    }
    guard lines.count - 1 <= Self.capacity else { throw FaultSpecError("more than \(Self.capacity) faults") }
    for line in lines.dropFirst() {
      let words = line.split(separator: " ", maxSplits: 4)
      guard words.count == 5, let id = Int(words[0]), id > 0, !entries.contains(where: { $0.id == id }),
        let origin = Origin(rawValue: String(words[1])), let fired = UInt32(words[2]),
        let draws = UInt64(words[3])
      else {
        throw FaultSpecError("a damaged line: '\(line)'")
      }
      entries.append(
        Entry(id: id, fault: try Fault(parsing: String(words[4])), origin: origin, fired: fired, draws: draws)
      )
      nextID = max(nextID, id + 1)
    }
  }
}
