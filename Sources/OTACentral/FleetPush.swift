import OTALink
import OTASender
import OTASystem

/// Several pushes at once, in one loop on one thread: each device has its own `PushSession` (its
/// own link, resume, delta choice, trial wait and verdict), at most `parallel` of them running and
/// the rest waiting their turn in the order given, each started once the one before it has
/// reached its transfer (`mayStart`). A device that fails, rolls back or cannot be
/// reached ends its own session only; the others go on.
public final class FleetPush {
  /// How one device's push ended.
  public enum Ending {
    /// The session ran to an outcome (which may be a failure).
    case finished(SenderOutcome)
    /// No session could start: the link could not be made (said in the reason).
    case unreachable(String)
    /// The loop itself failed while this session ran (the poller's error).
    case linkFailed(LinkError)
  }

  /// Makes device `index`'s session when its turn comes, or says why it cannot.
  public typealias SessionMaker = (_ index: Int) -> Result<PushSession, LinkFailureReason>

  /// Why a device's link could not be made.
  public struct LinkFailureReason: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
  }

  public let count: Int
  public let parallel: Int
  private let makeSession: SessionMaker
  private let onEnded: (_ index: Int, _ ending: Ending, _ session: PushSession?) -> Void
  private var waiting: [Int]
  private var running: [(index: Int, session: PushSession)] = []
  /// The most sessions that ran at once.
  public private(set) var peakRunning = 0

  /// `onEnded` is called once per device, in the order they end.
  public init(
    count: Int, parallel: Int, makeSession: @escaping SessionMaker,
    onEnded: @escaping (_ index: Int, _ ending: Ending, _ session: PushSession?) -> Void
  ) {
    self.count = count
    self.parallel = max(1, parallel)
    self.makeSession = makeSession
    self.onEnded = onEnded
    waiting = Array(0..<count)
  }

  /// Runs until every device's push has ended.
  public func run() {
    while true {
      startWaiting()
      guard !running.isEmpty else { return }
      let timeouts = running.compactMap { $0.session.timeout() }
      let readable: Set<Int32>
      do {
        readable = try Poller.wait(for: running.flatMap(\.session.descriptors), timeout: timeouts.min())
      } catch {
        // The poller failing is no one device's fault, but nothing can go on: every running
        // session ends with it, and the waiting ones too.
        let failure = LinkError(error)
        for (index, session) in running { end(index, .linkFailed(failure), session) }
        running.removeAll()
        for index in waiting { end(index, .linkFailed(failure), nil) }
        waiting.removeAll()
        return
      }
      for (index, session) in running {
        session.poll(readable: readable)
        if let outcome = session.result { end(index, .finished(outcome), session) }
      }
      running.removeAll { $0.session.result != nil }
    }
  }

  /// How long a session that has not reached its transfer keeps the next from starting.
  public static let openingPatience: Duration = .seconds(2)

  /// Whether a session in `phase`, begun `since` ago, is still opening its push (connecting,
  /// reading Info, FEATURES, STATUS, PREPARE) and keeps the next session from starting.
  static func isOpening(_ phase: SenderPhase, since: Duration) -> Bool {
    switch phase {
    case .idle, .connecting, .readingInfo, .checkingStatus, .preparing: since < openingPatience
    default: false
    }
  }

  /// Whether another session may start now: fewer than `parallel` run, and none of them is still
  /// opening. One opening at a time keeps the links out of step: started together, equal links
  /// open, transfer and end together, and while every one of them asks, answers or restarts the
  /// radio carries no data at all; opened one after another, their exchanges fall while the
  /// others send. A session that takes longer than `openingPatience` to reach its transfer (a
  /// slow connection, a device that must be asked again) holds the rest back no longer than that.
  static func mayStart(running: [(phase: SenderPhase, since: Duration)], parallel: Int) -> Bool {
    running.count < parallel && !running.contains { isOpening($0.phase, since: $0.since) }
  }

  private func startWaiting() {
    while !waiting.isEmpty,
      Self.mayStart(running: running.map { ($0.session.phase, $0.session.sinceBegin) }, parallel: parallel)
    {
      let index = waiting.removeFirst()
      switch makeSession(index) {
      case .success(let session):
        session.begin()
        if let outcome = session.result {
          end(index, .finished(outcome), session)
        } else {
          running.append((index, session))
          peakRunning = max(peakRunning, running.count)
        }
      case .failure(let reason):
        end(index, .unreachable(reason.description), nil)
      }
    }
  }

  private func end(_ index: Int, _ ending: Ending, _ session: PushSession?) {
    onEnded(index, ending, session)
  }
}
