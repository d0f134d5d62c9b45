import Logging
import OTADeltaPlan
import OTALink
import OTASender
import OTASystem
import OTAWire

/// The central's loop: runs the `SenderEngine` over a `CentralLink` in real time until the push
/// ends, reporting progress as the device acknowledges windows.
public final class PushSession {
  public let link: any CentralLink
  private var engine: SenderEngine
  private let logger: Logger
  private let onProgress: (SenderProgress, SenderReport) -> Void
  private let clock = ContinuousClock()
  private let started: ContinuousClock.Instant
  private var begun: ContinuousClock.Instant?
  private var timer: Duration?
  private var connectAt: Duration?
  private var outcome: SenderOutcome?
  /// Where the push stands: the engine's phase as of the last event handled.
  public private(set) var phase: SenderPhase = .idle
  /// The ATT MTU of the last connection.
  public private(set) var negotiatedMTU: Int?
  /// The L2CAP data channel of the last connection, nil when data went over GATT.
  public private(set) var dataChannel: DataChannelReport?
  /// What happened, in order: phases, drops, resumes. For the closing account.
  public private(set) var timeline: [(at: Duration, what: String)] = []

  public init(
    image: [UInt8], configuration: SenderConfiguration, bases: [BaseImage] = [],
    blockDigest: BlockDigester? = nil, link: any CentralLink, logger: Logger,
    origin: ContinuousClock.Instant? = nil,
    onProgress: @escaping (SenderProgress, SenderReport) -> Void = { _, _ in }
  ) {
    engine = SenderEngine(image: image, configuration: configuration, bases: bases, blockDigest: blockDigest)
    self.link = link
    self.logger = logger
    self.onProgress = onProgress
    started = origin ?? clock.now
  }

  /// Time since the session's origin: what its link and engine count in, and its report's
  /// durations are measured from. The origin is when it was made, or one shared by several
  /// sessions (a `FleetPush`: one radio's links count in one time).
  public var elapsed: Duration { clock.now - started }

  /// The session's origin on the continuous clock.
  public var startedAt: ContinuousClock.Instant { started }

  /// Since `begin()`: how long this push took (a session made with a shared origin may have
  /// waited its turn before it began).
  public var sinceBegin: Duration { begun.map { clock.now - $0 } ?? elapsed }

  /// How the push ended, once it has (the link is then disconnected).
  public var result: SenderOutcome? { outcome }

  /// Runs the push to its end on its own.
  public func run() throws(LinkError) -> SenderOutcome {
    begin()
    while true {
      if let outcome { return outcome }
      let readable: Set<Int32>
      do {
        readable = try Poller.wait(for: descriptors, timeout: timeout())
      } catch {
        throw LinkError(error)
      }
      poll(readable: readable)
    }
  }

  /// Starts the push: the engine's first actions. Then `poll` whenever `descriptors` are readable
  /// or `timeout()` has passed, until `result` is set. Several sessions can share one loop this way.
  public func begin() {
    begun = clock.now
    apply(engine.handle(.start(now: elapsed)))
    if outcome != nil { link.disconnect() }
  }

  /// The descriptors the session waits on.
  public var descriptors: [Int32] { outcome == nil ? link.descriptors : [] }

  /// How long the session may wait before it must be polled again; nil: only when readable.
  public func timeout() -> Duration? {
    guard outcome == nil else { return nil }
    let deadline = [timer, connectAt, link.nextDeadline].compactMap { $0 }.min()
    return deadline.map { max(.zero, $0 - elapsed) }
  }

  /// Handles what is readable (a set that may hold other sessions' descriptors too) and what is due.
  public func poll(readable: Set<Int32>) {
    guard outcome == nil else { return }
    let now = elapsed
    if let at = connectAt, now >= at {
      connectAt = nil
      link.connect(now: now)
    }
    for event in link.service(readable: readable, now: now) {
      handle(event, now: now)
      if outcome != nil { break }
    }
    if outcome == nil, let due = timer, now >= due {
      timer = nil
      apply(engine.handle(.tick(now: now)))
    }
    if outcome != nil { link.disconnect() }
  }

  private func handle(_ event: CentralEvent, now: Duration) {
    switch event {
    case .connected(let mtu):
      negotiatedMTU = mtu.value
      dataChannel = nil
      note("connected, ATT MTU \(mtu)")
      apply(engine.handle(.connected(mtu: mtu, now: now)))
    case .connectFailed(let reason):
      logger.debug("connect failed", metadata: ["reason": "\(reason)"])
      apply(engine.handle(.connectFailed(reason: reason, now: now)))
    case .deviceBusy:
      logger.debug("connect failed", metadata: ["reason": "\(LinkError.deviceBusy)"])
      apply(engine.handle(.deviceBusy(now: now)))
    case .disconnected(let reason):
      note("link lost: \(reason)")
      apply(engine.handle(.disconnected(now: now)))
    case .notification(let bytes):
      apply(engine.handle(.notification(bytes, now: now)))
    case .info(let bytes):
      apply(engine.handle(.info(bytes, now: now)))
    case .blockHashes(let bytes):
      apply(engine.handle(.blockHashes(bytes, now: now)))
    case .writable(let count):
      apply(engine.handle(.writable(count: count, now: now)))
    case .dataChannelOpened(let report):
      dataChannel = report
      note("data over L2CAP PSM 0x\(String(report.psm, radix: 16))")
      apply(engine.handle(.dataChannel(maxChunkPayload: report.maxChunkPayload ?? 4096, now: now)))
    case .identity:
      break  // never asked for by a push
    case .controlWriteFailed(let status):
      logger.warning("control-point write refused", metadata: ["att-error": "0x\(String(status, radix: 16))"])
    }
  }

  private func apply(_ actions: [SenderAction]) {
    for action in actions {
      switch action {
      case .connect(let delay):
        connectAt = elapsed + delay
      case .disconnect:
        link.disconnect()
      case .readInfo:
        link.readInfo()
      case .readBlockHashes:
        link.readBlockHashes()
      case .writeControl(let bytes):
        link.writeControl(bytes)
      case .writeData(let bytes):
        link.writeData(bytes)
      case .armTimer(let due):
        timer = due
      case .progress(let progress):
        onProgress(progress, engine.report)
      case .finished(let result):
        outcome = result
      }
    }
    if engine.phase != phase {
      phase = engine.phase
      note(phase.rawValue)
      // The bytes on air so far ride on every phase change, not only the transfer's: a reader of the
      // last progress line (the lab, a script) must not see 0 after a push that sent 40 KiB.
      onProgress(
        SenderProgress(
          phase: phase, committed: engine.committed, total: engine.size, bytesOnAir: engine.report.bytesOnAir),
        engine.report)
    }
  }

  private func note(_ what: String) {
    timeline.append((elapsed, what))
    logger.debug("\(what)")
  }
}
