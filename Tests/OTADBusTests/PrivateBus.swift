import DBusTestSupport
import Foundation
import OTADBus
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Waits until one of `descriptors` is readable or `timeout` passes: the loop the library is for.
func waitReadable(_ descriptors: [Int32], timeout: Duration?) {
  var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
  let milliseconds =
    timeout.map {
      Int32(clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000)
    }
    ?? -1
  _ = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds) }
}

/// Several connections served by one single-threaded poll loop, as otad will run its GATT server
/// and client: every wait polls all descriptors and processes every connection.
final class TestLoop {
  let connections: [DBusConnection]
  /// Events each connection has produced and nobody has taken yet.
  private(set) var events: [[DBusEvent]]

  init(_ connections: [DBusConnection]) {
    self.connections = connections
    events = connections.map { _ in [] }
  }

  /// Runs the loop until `done` holds (checked after each round) or five seconds pass.
  func run(until done: () -> Bool) throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !done() {
      guard ContinuousClock.now < deadline else {
        throw DBusError.named("test.Timeout", message: "loop timed out")
      }
      let timeouts = connections.compactMap(\.pollTimeout) + [.milliseconds(100)]
      waitReadable(connections.map(\.descriptor), timeout: timeouts.min())
      for (index, connection) in connections.enumerated() { events[index] += connection.process() }
    }
  }

  /// Starts a call on `connection` and runs the loop until its reply arrives.
  func call(
    on connection: DBusConnection, destination: String?, path: DBusObjectPath, interface: String?,
    method: String, arguments: [DBusValue] = [], timeout: Duration = .seconds(5)
  ) throws -> Result<[DBusValue], DBusError> {
    let index = try #require(connections.firstIndex { $0 === connection })
    let serial = try connection.startCall(
      destination: destination, path: path, interface: interface, method: method, arguments: arguments,
      timeout: timeout)
    var result: Result<[DBusValue], DBusError>?
    try run {
      if let position = events[index].firstIndex(where: {
        if case .reply(serial, _) = $0 { true } else { false }
      }),
        case .reply(_, let reply) = events[index].remove(at: position)
      {
        result = reply
      }
      return result != nil
    }
    return try #require(result)
  }

  /// Runs the loop until `connection` has received a signal `member`, and takes it.
  func signal(_ member: String, on connection: DBusConnection) throws -> DBusSignal {
    let index = try #require(connections.firstIndex { $0 === connection })
    var found: DBusSignal?
    try run {
      if let position = events[index].firstIndex(where: {
        if case .signal(let s) = $0 { s.member == member } else { false }
      }),
        case .signal(let signal) = events[index].remove(at: position)
      {
        found = signal
      }
      return found != nil
    }
    return try #require(found)
  }
}
