import OTALink

/// The sessions of a running daemon, for an app's team (`otad run --sessions DIR`,
/// docs/APP-TESTING.md): the OTA central's from its connection to its disconnection, each SMP
/// client's from its first request until it goes or is quiet for 30 s. A session that ended is
/// handed out once (`takeEnded`); a restart or a stop ends them all. Pure: activities and
/// wall-clock times (microseconds) in.
public struct SessionRecorder: Sendable {
  /// An SMP client (or the Legacy DFU central) quiet this long (microseconds) has ended its session:
  /// UDP has no disconnection.
  public static let smpQuiet: UInt64 = 30_000_000

  private var ota: SessionRecord?
  private var smp: [String: (record: SessionRecord, last: UInt64)] = [:]
  /// Who the last request came from: a fault that fires belongs to that session.
  private var lastClient: String?
  private var count = 0
  private var committed: UInt32 = 0
  private var lastOTAEnd: (time: UInt64, committed: UInt32)?
  private var ended: [SessionRecord] = []
  private let pid: Int

  public init(pid: Int = 2) { self.pid = pid }

  public mutating func record(_ activity: DeviceActivity, at time: UInt64) {
    expireQuietSMP(at: time)
    switch activity {
    case .serving(_, _, _, let committed):
      self.committed = committed
    case .connected:
      if var old = ota {
        old.finish("a new connection replaced it", at: time)
        ended.append(old)
      }
      count += 1
      var session = SessionRecord(
        number: count, central: "OTA central", at: time, committed: committed, pid: pid)
      if let last = lastOTAEnd {
        session.note(
          "the central came back \(WallClock.milliseconds(time - last.time)) ms after the last session ended "
            + "(\(last.committed) bytes committed then)", at: time)
      }
      session.record(activity, at: time)
      ota = session
      lastClient = nil
    case .disconnected(let committed):
      self.committed = committed
      guard var session = ota else { return }
      session.record(activity, at: time)
      ended.append(session)
      ota = nil
      lastOTAEnd = (time, committed)
    case .request, .response, .dataWrite:
      lastClient = nil
      if case .response(_, _, let offset?, _) = activity { committed = max(committed, offset) }
      ota?.record(activity, at: time)
    case .fault:
      if let client = lastClient, smp[client] != nil {
        smp[client]?.record.record(activity, at: time)
      } else {
        ota?.record(activity, at: time)
      }
    case .smpRequest(let client, _, _, _):
      recordOwn(activity, of: client, named: "SMP client \(client)", at: time)
    case .nordicDFU(let service, _), .nordicDFUPacket(let service, _, _, _):
      recordOwn(activity, of: Self.central(of: service), named: Self.central(of: service), at: time)
    case .nordicDFUGone(let service):
      guard var session = smp.removeValue(forKey: Self.central(of: service))?.record else { return }
      session.record(activity, at: time)
      ended.append(session)
    case .smpAnswer(let client, _):
      smp[client]?.record.record(activity, at: time)
      smp[client]?.last = time
    case .smpClientGone(let client):
      guard var session = smp.removeValue(forKey: client)?.record else { return }
      session.record(activity, at: time)
      ended.append(session)
    case .restart, .stopped:
      for var session in open {
        session.record(activity, at: time)
        ended.append(session)
      }
      ota = nil
      smp.removeAll()
    case .activation:
      // What became of a kept activation: each open session's business (the central that asked).
      ota?.record(activity, at: time)
      for client in smp.keys { smp[client]?.record.record(activity, at: time) }
    case .bootDecision, .healthCheck, .verdict:
      break
    }
  }

  /// A Nordic DFU central's session, kept beside the SMP clients' (it has no name of its own).
  static func central(of service: NordicDFUService) -> String { "\(service.rawValue) central" }

  /// An activity of a client that has a session of its own (an SMP client, the Legacy DFU
  /// central): its session, begun at its first word.
  private mutating func recordOwn(
    _ activity: DeviceActivity, of client: String, named name: String, at time: UInt64
  ) {
    if smp[client] == nil {
      count += 1
      smp[client] = (SessionRecord(number: count, central: name, at: time, committed: 0, pid: pid), time)
    }
    smp[client]?.record.record(activity, at: time)
    smp[client]?.last = time
    lastClient = client
  }

  /// The sessions still open, oldest first.
  public var open: [SessionRecord] {
    ([ota].compactMap { $0 } + smp.values.map(\.record)).sorted { $0.number < $1.number }
  }

  /// The sessions that ended since the last call, in the order they ended.
  public mutating func takeEnded() -> [SessionRecord] {
    defer { ended.removeAll() }
    return ended
  }

  private mutating func expireQuietSMP(at time: UInt64) {
    for (client, entry) in smp where time > entry.last + Self.smpQuiet {
      var session = entry.record
      session.finish("the SMP client was quiet for 30 s", at: entry.last + Self.smpQuiet)
      ended.append(session)
      smp[client] = nil
    }
  }
}
