// The seam: every call OTASystem makes to the kernel goes through `SystemCalls.perform`, which
// retries EINTR (the one place in the project that does) and, when a test has installed an observer
// for its task, lets it record the call, fail it or shorten it. In production no observer is
// installed: one task-local read and the call itself, no allocation.
import Glibc

/// The calls the seam knows by name (what a trace shows).
public enum SystemCallName: String, Sendable, Hashable {
  case open, close, read, write, pread, pwrite, fsync, fdatasync, ftruncate, fstat, lseek, fcntl
  case stat, lstat, rename, unlink, rmdir, mkdir, readlink, symlink, access, flock, opendir, readdir
  case poll, signalfd, sigmask, pidfdOpen = "pidfd_open", spawn, exec, waitpid, kill
  case socket, socketpair, bind, listen, accept, connect, send, recv, getsockopt, sendto, recvfrom,
    getsockname, setsockopt, uname, mmap, munmap
}

/// One call as an observer sees it: the name, the path or descriptor it is about, and the byte count
/// asked for (reads and writes).
public struct SystemCall: Sendable, Hashable, CustomStringConvertible {
  public let name: SystemCallName
  public let path: String?
  public let descriptor: Int32?
  public let count: Int?

  public var description: String {
    var text = name.rawValue
    if let path { text += " \(path)" }
    if let count { text += " \(count)" }
    return text
  }
}

/// What an observer wants done with a call.
public enum SystemCallDecision: Sendable, Equatable {
  /// Make the real call.
  case proceed
  /// Do not make it; it fails with this errno.
  case fail(Errno)
  /// Make it with at most this many bytes (a short read or write).
  case limit(Int)
}

/// Watches the calls made in one task (installed with `SystemCalls.$observer.withValue`).
public protocol SystemCallObserver: Sendable {
  func decide(_ call: SystemCall) -> SystemCallDecision
  func record(_ call: SystemCall, result: Result<Int, Errno>)
}

public enum SystemCalls {
  /// The observer of the current task's calls; nil (the live system, untouched) unless a test set one.
  @TaskLocal public static var observer: (any SystemCallObserver)?

  /// Makes one call: `body` gets the byte count to use (`count`, or less if an observer shortens it)
  /// and returns the C result (-1 with errno set on failure). EINTR is retried here unless
  /// `retryingInterrupts` is false (close: on Linux the descriptor is gone either way).
  @inline(__always)
  static func perform(
    _ name: SystemCallName, path: @autoclosure () -> String? = nil, descriptor: Int32? = nil,
    count: Int? = nil,
    retryingInterrupts: Bool = true, _ body: (Int) -> Int
  ) -> Result<Int, Errno> {
    guard let observer else {
      while true {
        let result = body(count ?? 0)
        if result >= 0 { return .success(result) }
        let code = Errno.current
        if code == .interrupted && retryingInterrupts { continue }
        return .failure(code)
      }
    }
    let call = SystemCall(name: name, path: path(), descriptor: descriptor, count: count)
    while true {
      let result: Result<Int, Errno>
      switch observer.decide(call) {
      case .proceed:
        let value = body(count ?? 0)
        result = value >= 0 ? .success(value) : .failure(Errno.current)
      case .fail(let code):
        result = .failure(code)
      case .limit(let limit):
        let value = body(min(limit, count ?? 0))
        result = value >= 0 ? .success(value) : .failure(Errno.current)
      }
      observer.record(call, result: result)
      if case .failure(.interrupted) = result, retryingInterrupts { continue }
      return result
    }
  }

  /// `perform` for calls that return 0 or -1: the error, or nil.
  @inline(__always)
  static func check(
    _ name: SystemCallName, path: @autoclosure () -> String? = nil, descriptor: Int32? = nil,
    retryingInterrupts: Bool = true, _ body: () -> Int32
  ) -> Errno? {
    let result = perform(name, path: path(), descriptor: descriptor, retryingInterrupts: retryingInterrupts) {
      _ in Int(body())
    }
    if case .failure(let code) = result { return code }
    return nil
  }
}
