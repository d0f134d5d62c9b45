// OTABoot's files: reading a small file whole, replacing one atomically, and swapping a symbolic
// link, through OTAStorage's `DurableFile` (the same code the record store uses). Failures come back
// as `BootBackendError`s naming the call, the path, the reason and what to do, with the errno.
import OTAStorage
import OTASystem

enum BootFileSystem {
  /// The whole file, or nil when there is no such file (`/proc/cmdline`, device-tree properties,
  /// autoboot.txt).
  static func contents(of path: String) throws(BootBackendError) -> [UInt8]? {
    try backendErrors { () throws(StorageError) in try DurableFile.contents(of: path) }
  }

  /// Replaces `path` with `bytes` so that after a power cut it holds the old or the new bytes.
  static func replace(_ path: String, with bytes: [UInt8]) throws(BootBackendError) {
    try backendErrors { () throws(StorageError) in try DurableFile.replace(path, with: bytes) }
  }

  /// Where the symbolic link at `path` points, or nil when there is nothing at `path`. Something that
  /// is not a symbolic link is an error: the backend will not replace a real file or directory.
  static func symbolicLinkTarget(_ path: String) throws(BootBackendError) -> String? {
    do {
      return try DurableFile.symbolicLinkTarget(path)
    } catch .system("readlink", _, .invalidArgument) {
      throw BootBackendError("\(path) exists and is not a symbolic link; move it aside")
    } catch {
      throw backendError(error)
    }
  }

  /// Points the symbolic link `path` at `target` atomically.
  static func replaceSymbolicLink(_ path: String, pointingAt target: String) throws(BootBackendError) {
    try backendErrors { () throws(StorageError) in
      try DurableFile.replaceSymbolicLink(path, pointingAt: target)
    }
  }

  private static func backendErrors<T>(_ body: () throws(StorageError) -> T) throws(BootBackendError) -> T {
    do {
      return try body()
    } catch {
      throw backendError(error)
    }
  }

  /// "rename /boot/autoboot.txt.tmp: Read-only file system (errno 30): /boot/autoboot.txt.tmp is on
  /// a read-only file system: mount it read-write, ...": the storage error's whole explanation, its
  /// remedy included, and its errno.
  private static func backendError(_ error: StorageError) -> BootBackendError {
    if case .system(_, _, let code) = error {
      return BootBackendError(error.explanation, errno: code)
    }
    return BootBackendError(error.explanation)
  }
}
