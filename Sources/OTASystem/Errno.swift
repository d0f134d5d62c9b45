// The one error number of the project: what a system call failed with, by name and in the C
// library's own words, instead of a bare Int32 that every caller decodes again.
import Glibc

/// An errno value: `Errno.noSpace.name == "ENOSPC"`, `.description == "No space left on device"`.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
  public let rawValue: Int32

  public init(rawValue: Int32) { self.rawValue = rawValue }

  /// The C library's text for it (strerror), e.g. "Read-only file system".
  public var description: String {
    guard let text = strerror(rawValue) else { return "unknown error \(rawValue)" }
    return String(cString: text)
  }

  /// The symbolic name ("ENOSPC") for the numbers this project names, else "errno N".
  public var name: String { Self.names[rawValue] ?? "errno \(rawValue)" }

  /// The calling thread's errno now (right after a call returned -1).
  static var current: Errno { Errno(rawValue: errno) }

  public static let notPermitted = Errno(rawValue: EPERM)
  public static let noSuchFile = Errno(rawValue: ENOENT)
  public static let interrupted = Errno(rawValue: EINTR)
  public static let io = Errno(rawValue: EIO)
  public static let badDescriptor = Errno(rawValue: EBADF)
  public static let wouldBlock = Errno(rawValue: EAGAIN)
  public static let noBufferSpace = Errno(rawValue: ENOBUFS)
  public static let permissionDenied = Errno(rawValue: EACCES)
  public static let exists = Errno(rawValue: EEXIST)
  public static let notDirectory = Errno(rawValue: ENOTDIR)
  public static let isDirectory = Errno(rawValue: EISDIR)
  public static let invalidArgument = Errno(rawValue: EINVAL)
  public static let textFileBusy = Errno(rawValue: ETXTBSY)
  public static let fileTooLarge = Errno(rawValue: EFBIG)
  public static let noSpace = Errno(rawValue: ENOSPC)
  public static let readOnlyFileSystem = Errno(rawValue: EROFS)
  public static let brokenPipe = Errno(rawValue: EPIPE)
  public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
  public static let quotaExceeded = Errno(rawValue: EDQUOT)
  public static let connectionAborted = Errno(rawValue: ECONNABORTED)
  public static let connectionReset = Errno(rawValue: ECONNRESET)
  public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
  public static let noChild = Errno(rawValue: ECHILD)
  public static let noSuchProcess = Errno(rawValue: ESRCH)
  /// The kernel has no such socket family (no Bluetooth in this kernel or container).
  public static let familyNotSupported = Errno(rawValue: EAFNOSUPPORT)
  public static let timedOut = Errno(rawValue: ETIMEDOUT)
  public static let hostDown = Errno(rawValue: EHOSTDOWN)
  public static let addressInUse = Errno(rawValue: EADDRINUSE)
  public static let notConnected = Errno(rawValue: ENOTCONN)

  private static let names: [Int32: String] = [
    EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", EBADF: "EBADF", EAGAIN: "EAGAIN",
    ENOBUFS: "ENOBUFS", EACCES: "EACCES", EEXIST: "EEXIST", ENOTDIR: "ENOTDIR", EISDIR: "EISDIR",
    EINVAL: "EINVAL", ETXTBSY: "ETXTBSY", EFBIG: "EFBIG", ENOSPC: "ENOSPC", EROFS: "EROFS", EPIPE: "EPIPE",
    ENAMETOOLONG: "ENAMETOOLONG", EDQUOT: "EDQUOT", ECONNABORTED: "ECONNABORTED",
    ECONNRESET: "ECONNRESET", ECONNREFUSED: "ECONNREFUSED", ECHILD: "ECHILD", ESRCH: "ESRCH",
    EAFNOSUPPORT: "EAFNOSUPPORT", ETIMEDOUT: "ETIMEDOUT", EHOSTDOWN: "EHOSTDOWN", EADDRINUSE: "EADDRINUSE",
    ENOTCONN: "ENOTCONN",
  ]
}
