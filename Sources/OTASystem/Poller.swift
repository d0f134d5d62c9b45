// The daemon's and the central's one wait: poll(2) over descriptor numbers.
import Glibc

/// Waits for descriptors to become readable (or writable), or for a deadline.
public enum Poller {
  /// The subset of `descriptors` that is readable (or closed), or of `writable` that can take more
  /// bytes, after at most `timeout` (nil: no limit). Negative descriptors are ignored. An interrupted
  /// wait returns nothing ready.
  public static func wait(for descriptors: [Int32], writable: [Int32] = [], timeout: Duration?)
    throws(SystemError) -> Set<Int32>
  {
    var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    for descriptor in writable {
      if let index = fds.firstIndex(where: { $0.fd == descriptor }) {
        fds[index].events |= Int16(POLLOUT)
      } else {
        fds.append(pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0))
      }
    }
    let milliseconds = Self.milliseconds(timeout)
    let result = fds.withUnsafeMutableBufferPointer { buffer in
      SystemCalls.perform(.poll, count: buffer.count, retryingInterrupts: false) { _ in
        Int(poll(buffer.baseAddress, nfds_t(buffer.count), milliseconds))
      }
    }
    switch result {
    case .success: return Set(fds.filter { $0.revents != 0 && $0.fd >= 0 }.map(\.fd))
    case .failure(.interrupted): return []
    case .failure(let code): throw SystemError(operation: "poll", path: "", errno: code)
    }
  }

  /// A timeout as poll's milliseconds, rounded up so that a wait never ends before its deadline.
  static func milliseconds(_ timeout: Duration?) -> Int32 {
    guard let timeout else { return -1 }
    let total = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
    return Int32(clamping: max(0, total + (timeout > .zero ? 1 : 0)))
  }
}
