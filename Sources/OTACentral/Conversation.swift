import OTALink
import OTAWire

/// One link's short conversation (`CommandSession`) as events come: Info, then the identity when
/// asked, then the request chosen from Info if any, and its answer.
struct Conversation {
  typealias Ending = Result<
    (info: InfoRecord, answer: Response?, identity: DeviceIdentity?), CommandSession.Failure
  >

  let link: any CentralLink
  let choose: (InfoRecord) -> Request?
  let identify: Bool
  private var info: InfoRecord?
  private var request: Request?
  private var identity: DeviceIdentity?

  init(link: any CentralLink, choose: @escaping (InfoRecord) -> Request?, identify: Bool) {
    self.link = link
    self.choose = choose
    self.identify = identify
  }

  /// One event of the link: the conversation's ending, or nil while it goes on.
  mutating func handle(_ event: CentralEvent) -> Ending? {
    switch event {
    case .connected:
      link.readInfo()
    case .connectFailed(let reason):
      return .failure(.unreachable(reason))
    case .deviceBusy:
      return .failure(.busy)
    case .disconnected(let reason):
      // After the request was written: the device may have carried it out (ACTIVATE's restart can
      // close the link before its answer gets out).
      if let info, request != nil { return .failure(.droppedAfterRequest(info, reason: reason)) }
      return .failure(.disconnected(reason))
    case .info(let bytes):
      let read: InfoRecord
      do {
        read = try InfoRecord(bytes: bytes)
      } catch {
        return .failure(.unreadableInfo("\(error)"))
      }
      info = read
      if identify {
        link.readIdentity()
        return nil
      }
      return ask(read)
    case .identity(let read):
      guard let info, identify else { break }
      identity = read
      return ask(info)
    case .blockHashes:
      break  // never asked for here
    case .notification(let bytes):
      if let info, let request, let answer = try? Response(bytes: bytes),
        answer.requestOpcode == request.opcode.rawValue
      {
        return .success((info, answer, identity))
      }
    case .writable, .controlWriteFailed, .dataChannelOpened:
      break
    }
    return nil
  }

  /// The request chosen from Info, sent; the ending at once when there is none.
  private mutating func ask(_ info: InfoRecord) -> Ending? {
    request = choose(info)
    guard let request else { return .success((info, nil, identity)) }
    link.writeControl(request.encoded)
    return nil
  }
}
