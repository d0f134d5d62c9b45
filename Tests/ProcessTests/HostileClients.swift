import Foundation
import Synchronization

/// A client of otad's socket written here, byte by byte, not with the project's link code: it
/// breaks the simulated link's rules on purpose.
final class LinkClient {
  let descriptor: Int32

  init(path: String) throws {
    descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard connected == 0 else {
      _ = Glibc.close(descriptor)
      throw DaemonError("cannot connect to \(path): \(String(cString: strerror(errno)))")
    }
  }

  deinit { _ = Glibc.close(descriptor) }

  /// What arrives within `timeout`: nil if nothing, empty if the device closed the connection.
  func receive(timeout: TimeInterval) -> [UInt8]? {
    var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
    return count <= 0 ? [] : Array(buffer[0..<count])
  }

  /// Writes `bytes` whole (a blocking socket).
  func send(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let count = bytes[offset...].withUnsafeBytes {
        Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      guard count > 0 else { return }
      offset += count
    }
  }

  /// Frames as the simulated link writes them: length u16 (little-endian), type, fields.
  static let hello: [UInt8] = [0x03, 0x00, 0x01, 0x05, 0x02]  // MTU 517
  static let busy: [UInt8] = [0x01, 0x00, 0x03]
  static let readInfo: [UInt8] = [0x04, 0x00, 0x13, 0x03, 0x00, 0x00]  // Read Blob, Info, offset 0
}

/// Says hello, then sends Info reads as fast as otad takes them and never reads an answer, on a
/// thread of its own, until `finish()` or `duration` has passed. With `reconnect` it connects
/// again each time otad drops it; otherwise it ends at the first drop.
final class Flooder: Sendable {
  struct Tally: Sendable {
    var connections = 0
    var drops = 0
    var bytesSent = 0
    var ended = false
  }

  let path: String
  private let state = Mutex((tally: Tally(), stop: false))
  private let done = DispatchSemaphore(value: 0)

  init(path: String, reconnect: Bool, duration: TimeInterval) {
    self.path = path
    Thread.detachNewThread { [self] in
      flood(reconnect: reconnect, until: Date().addingTimeInterval(duration))
      state.withLock { $0.tally.ended = true }
      done.signal()
    }
  }

  var tally: Tally { state.withLock { $0.tally } }

  /// Waits (up to `timeout`) until `condition` holds for the tally.
  func wait(upTo timeout: TimeInterval, until condition: (Tally) -> Bool) -> Tally {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition(tally), Date() < deadline { usleep(10_000) }
    return tally
  }

  /// Stops flooding and waits for the thread (it ends within its poll interval).
  @discardableResult
  func finish() -> Tally {
    state.withLock { $0.stop = true }
    done.wait()
    return tally
  }

  private var stopped: Bool { state.withLock { $0.stop } }

  private func flood(reconnect: Bool, until deadline: Date) {
    let burst = Array(repeating: LinkClient.readInfo, count: 1000).flatMap { $0 }
    while !stopped, Date() < deadline {
      guard let client = try? LinkClient(path: path) else { return }
      let flags = fcntl(client.descriptor, F_GETFL)
      _ = fcntl(client.descriptor, F_SETFL, flags | O_NONBLOCK)
      state.withLock { $0.tally.connections += 1 }
      let stream = LinkClient.hello + burst
      var offset = 0
      var dropped = false
      while !stopped, !dropped, Date() < deadline {
        let count = stream.withUnsafeBytes {
          send(client.descriptor, $0.baseAddress! + offset, stream.count - offset, Int32(MSG_NOSIGNAL))
        }
        if count > 0 {
          state.withLock { $0.tally.bytesSent += count }
          offset += count
          // Once the hello is out, the same burst of reads again and again.
          if offset == stream.count { offset = LinkClient.hello.count }
        } else if count < 0, errno == EAGAIN || errno == EINTR {
          var poller = pollfd(fd: client.descriptor, events: Int16(POLLOUT), revents: 0)
          _ = poll(&poller, 1, 50)
        } else {
          dropped = true
        }
      }
      if dropped { state.withLock { $0.tally.drops += 1 } }
      if !reconnect { return }
    }
  }
}
