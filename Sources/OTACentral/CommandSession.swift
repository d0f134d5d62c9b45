import OTALink
import OTASender
import OTASystem
import OTAWire

/// One short conversation: connect, read Info (and the device's identity, for `identify`),
/// optionally send one control-point request and wait for its answer. For `otactl info`, `abort`
/// and `confirm`.
public enum CommandSession {
  public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
    case unreachable(String)
    /// The device refused the connection: it serves another central.
    case busy
    case timedOut
    case disconnected(String)
    case unreadableInfo(String)
    /// The link dropped after the request was written, before its answer: the device may have
    /// carried it out (ACTIVATE's restart can close the link before its answer gets out). Info as
    /// read before the request.
    case droppedAfterRequest(InfoRecord, reason: String)

    public var description: String {
      switch self {
      case .unreachable(let reason): "could not connect: \(reason)"
      case .busy: "device busy with another central"
      case .timedOut: "the device did not answer in time"
      case .disconnected(let reason): "the link dropped: \(reason)"
      case .unreadableInfo(let reason): "the device's Info could not be read: \(reason)"
      case .droppedAfterRequest(_, let reason): "the link dropped before the device answered: \(reason)"
      }
    }
  }

  public static func run(link: any CentralLink, request: Request?, timeout: Duration = .seconds(10))
    -> Result<(info: InfoRecord, answer: Response?), Failure>
  {
    run(link: link, request: { _ in request }, timeout: timeout)
  }

  /// As above, with the request chosen from Info (nil: send nothing, answer nil).
  public static func run(
    link: any CentralLink, request choose: (InfoRecord) -> Request?, timeout: Duration = .seconds(10)
  ) -> Result<(info: InfoRecord, answer: Response?), Failure> {
    converse(link: link, request: choose, identify: false, timeout: timeout).map { ($0.info, $0.answer) }
  }

  /// Info, then the device's identity from its Device Information Service (serial, model, hardware
  /// revision; a field nil where the device does not serve it). For `otactl info`.
  public static func identify(link: any CentralLink, timeout: Duration = .seconds(10))
    -> Result<(info: InfoRecord, identity: DeviceIdentity), Failure>
  {
    converse(link: link, request: { _ in nil }, identify: true, timeout: timeout).map {
      ($0.info, $0.identity ?? DeviceIdentity())
    }
  }

  /// The conversation: Info, then the identity when asked (`identify`), then the request if any.
  private static func converse(
    link: any CentralLink, request choose: (InfoRecord) -> Request?, identify: Bool, timeout: Duration
  ) -> Conversation.Ending {
    let clock = ContinuousClock()
    let started = clock.now
    var now: Duration { clock.now - started }
    link.connect(now: now)
    defer { link.disconnect() }
    return withoutActuallyEscaping(choose) { choose in
      var conversation = Conversation(link: link, choose: choose, identify: identify)
      return talk(&conversation, link: link, timeout: timeout, now: { now })
    }
  }

  /// Runs one conversation's link until the conversation ends or `timeout`.
  private static func talk(
    _ conversation: inout Conversation, link: any CentralLink, timeout: Duration, now: () -> Duration
  ) -> Conversation.Ending {
    while now() < timeout {
      let deadline = link.nextDeadline ?? timeout
      let readable: Set<Int32>
      do {
        readable = try Poller.wait(for: link.descriptors, timeout: max(.zero, min(deadline, timeout) - now()))
      } catch {
        return .failure(.disconnected(error.description))
      }
      for event in link.service(readable: readable, now: now()) {
        if let ending = conversation.handle(event) { return ending }
      }
    }
    return .failure(.timedOut)
  }
}
