import OTALink
import OTASystem
import OTAWire

extension CommandSession {
  /// `identify` with several devices at once, in one loop on one thread (so that simulated links
  /// may share one radio): at most `parallel` conversations at a time, each its own `timeout`
  /// from its connection, the rest waiting their turn in the order given. Each device's result in
  /// the order of `links`; a link that cannot be made (nil) is unreachable.
  public static func identify(
    links: [(any CentralLink)?], parallel: Int, timeout: Duration = .seconds(10)
  ) -> [Result<(info: InfoRecord, identity: DeviceIdentity), Failure>] {
    var results: [Conversation.Ending?] = links.map { $0 == nil ? .failure(.unreachable("no link")) : nil }
    var waiting = links.indices.filter { links[$0] != nil }
    var running: [(index: Int, conversation: Conversation, until: Duration)] = []
    let clock = ContinuousClock()
    let origin = clock.now
    var now: Duration { clock.now - origin }
    while true {
      while running.count < max(1, parallel), let index = waiting.first, let link = links[index] {
        waiting.removeFirst()
        link.connect(now: now)
        running.append((index, Conversation(link: link, choose: { _ in nil }, identify: true), now + timeout))
      }
      guard !running.isEmpty else { break }
      let next = running.map { min($0.conversation.link.nextDeadline ?? $0.until, $0.until) }.min() ?? now
      let readable: Set<Int32>
      do {
        readable = try Poller.wait(
          for: running.flatMap(\.conversation.link.descriptors), timeout: max(.zero, next - now))
      } catch {
        for entry in running { results[entry.index] = .failure(.disconnected(error.description)) }
        running.removeAll()
        continue
      }
      for slot in running.indices {
        let link = running[slot].conversation.link
        for event in link.service(readable: readable, now: now) where results[running[slot].index] == nil {
          results[running[slot].index] = running[slot].conversation.handle(event)
        }
        if results[running[slot].index] == nil, now >= running[slot].until {
          results[running[slot].index] = .failure(.timedOut)
        }
      }
      for entry in running where results[entry.index] != nil { entry.conversation.link.disconnect() }
      running.removeAll { results[$0.index] != nil }
    }
    return results.map { ending in
      (ending ?? .failure(.timedOut)).map { ($0.info, $0.identity ?? DeviceIdentity()) }
    }
  }
}
