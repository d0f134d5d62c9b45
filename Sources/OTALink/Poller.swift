import CLinux

#if canImport(Glibc)
  import Glibc
#endif

/// Waits for descriptors to become readable (or writable), or for a deadline.
public enum Poller {
  /// The subset of `descriptors` that is readable (or closed), or of `writable` that can take more
  /// bytes, after at most `timeout`.
  public static func wait(for descriptors: [Int32], writable: [Int32] = [], timeout: Duration?)
    throws(LinkError) -> Set<Int32>
  {
    var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    for descriptor in writable {
      if let index = fds.firstIndex(where: { $0.fd == descriptor }) {
        fds[index].events |= Int16(POLLOUT)
      } else {
        fds.append(pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0))
      }
    }
    let milliseconds: Int32
    if let timeout {
      let total = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
      milliseconds = Int32(clamping: max(0, total + (timeout > .zero ? 1 : 0)))
    } else {
      milliseconds = -1
    }
    let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds) }
    if ready < 0 {
      if errno == EINTR { return [] }
      throw .system(operation: "poll", errno: errno)
    }
    return Set(fds.filter { $0.revents != 0 }.map(\.fd))
  }
}

/// SIGTERM and SIGINT (stop) and SIGHUP (reload) as a readable descriptor (signalfd), so a poll loop
/// can stop cleanly.
public final class StopSignals {
  public let descriptor: Int32
  public static let reload = SIGHUP

  public init() throws(LinkError) {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGTERM)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGHUP)
    guard pthread_sigmask(SIG_BLOCK, &set, nil) == 0 else {
      throw .system(operation: "sigmask", errno: errno)
    }
    descriptor = signalfd(-1, &set, Int32(SFD_CLOEXEC))
    guard descriptor >= 0 else { throw .system(operation: "signalfd", errno: errno) }
  }

  deinit { _ = Glibc.close(descriptor) }

  /// The signal that arrived (after the descriptor polled readable).
  public func take() -> Int32 {
    var info = signalfd_siginfo()
    let count = Glibc.read(descriptor, &info, MemoryLayout<signalfd_siginfo>.size)
    return count == MemoryLayout<signalfd_siginfo>.size ? Int32(info.ssi_signo) : 0
  }
}
