import CLinux
import Glibc

/// SIGTERM and SIGINT (stop) and SIGHUP (reload) as a readable descriptor (signalfd), so a poll loop
/// can stop cleanly.
public final class StopSignals: Sendable {
  public static let reload = SIGHUP
  public static let terminate = SIGTERM
  public static let interrupt = SIGINT

  private let file: FileDescriptor
  /// Readable when a signal waits; `take()` it.
  public var descriptor: Int32 { file.rawValue }

  /// Blocks the three signals for this thread (and the threads it starts) and opens the signalfd.
  public init() throws(SystemError) {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGTERM)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGHUP)
    // pthread_sigmask returns the error instead of setting errno.
    let masked = SystemCalls.perform(.sigmask) { _ in
      let code = pthread_sigmask(SIG_BLOCK, &set, nil)
      if code != 0 { errno = code }
      return code == 0 ? 0 : -1
    }
    if case .failure(let code) = masked { throw SystemError(operation: "sigmask", path: "", errno: code) }
    let opened = SystemCalls.perform(.signalfd) { _ in Int(signalfd(-1, &set, Int32(SFD_CLOEXEC))) }
    switch opened {
    case .success(let descriptor): file = FileDescriptor(taking: Int32(descriptor), path: "signalfd")
    case .failure(let code): throw SystemError(operation: "signalfd", path: "", errno: code)
    }
  }

  /// The signal that arrived (after the descriptor polled readable), or 0.
  public func take() -> Int32 {
    var info = signalfd_siginfo()
    let size = MemoryLayout<signalfd_siginfo>.size
    let count = withUnsafeMutableBytes(of: &info) { buffer in (try? file.readSome(into: buffer)) ?? 0 }
    return count == size ? Int32(info.ssi_signo) : 0
  }
}
