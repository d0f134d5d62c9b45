// The one file of OTABoot that talks to the kernel about files: reading a small file whole, replacing
// one atomically, and swapping a symbolic link. Failures come back as `BootBackendError`s naming the
// call, the path and the reason.
import Glibc

enum BootFileSystem {
  /// The error for a failed call: "rename /boot/autoboot.txt.tmp: Permission denied".
  static func failure(_ operation: String, _ path: String, _ code: Int32) -> BootBackendError {
    BootBackendError("\(operation) \(path): \(String(cString: strerror(code)))")
  }

  /// The whole file, or nil when there is no such file. Meant for small files (`/proc/cmdline`,
  /// device-tree properties, autoboot.txt).
  static func contents(of path: String) throws(BootBackendError) -> [UInt8]? {
    let fd = try open(path, flags: O_RDONLY | O_CLOEXEC, missingIsFine: true)
    guard let fd else { return nil }
    defer { _ = Glibc.close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if got > 0 {
        bytes += chunk[..<got]
      } else if got == 0 {
        return bytes
      } else if errno != EINTR {
        throw failure("read", path, errno)
      }
    }
  }

  /// Replaces `path` with `bytes` so that after a power cut it holds the old or the new bytes, never a
  /// mixture: write `path.tmp`, fsync it, rename it over `path`, fsync the directory.
  static func replace(_ path: String, with bytes: [UInt8]) throws(BootBackendError) {
    let temporary = path + ".tmp"
    guard let fd = try open(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC) else { return }
    do throws(BootBackendError) {
      try writeAll(bytes, to: fd, path: temporary)
      try retrying("fsync", temporary) { Glibc.fsync(fd) }
    } catch {
      _ = Glibc.close(fd)
      throw error
    }
    if Glibc.close(fd) != 0 && errno != EINTR { throw failure("close", temporary, errno) }
    try rename(temporary, to: path)
    try syncDirectory(containing: path)
  }

  /// Where the symbolic link at `path` points, or nil when there is nothing at `path`. Something that
  /// is not a symbolic link is an error: the backend will not replace a real file or directory.
  static func symbolicLinkTarget(_ path: String) throws(BootBackendError) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = buffer.withUnsafeMutableBufferPointer { Glibc.readlink(path, $0.baseAddress!, $0.count - 1) }
    if count >= 0 {
      return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    let code = errno
    if code == ENOENT { return nil }
    if code == EINVAL { throw BootBackendError("\(path) exists and is not a symbolic link; move it aside") }
    throw failure("readlink", path, code)
  }

  /// Points the symbolic link `path` at `target` atomically: a new link `path.tmp` renamed over `path`,
  /// then the directory fsynced. A `path.tmp` left by an earlier power cut is replaced.
  static func replaceSymbolicLink(_ path: String, pointingAt target: String) throws(BootBackendError) {
    let temporary = path + ".tmp"
    if Glibc.unlink(temporary) != 0 && errno != ENOENT { throw failure("unlink", temporary, errno) }
    if Glibc.symlink(target, temporary) != 0 { throw failure("symlink", temporary, errno) }
    try rename(temporary, to: path)
    try syncDirectory(containing: path)
  }

  /// `rename(2)`: atomically replaces `to`.
  static func rename(_ from: String, to: String) throws(BootBackendError) {
    if Glibc.rename(from, to) != 0 { throw failure("rename", from, errno) }
  }

  /// Fsyncs the directory holding `path`, which makes a rename in it durable.
  static func syncDirectory(containing path: String) throws(BootBackendError) {
    let directory = parentDirectory(of: path)
    guard let fd = try open(directory, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC) else { return }
    defer { _ = Glibc.close(fd) }
    try retrying("fsync", directory) { Glibc.fsync(fd) }
  }

  /// The directory part of a path: "/a/b" -> "/a", "b" -> ".", "/b" -> "/".
  static func parentDirectory(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    if slash == trimmed.startIndex { return "/" }
    return String(trimmed[..<slash])
  }

  /// `open(2)`, retried on EINTR; nil for a missing file when `missingIsFine`.
  private static func open(
    _ path: String, flags: Int32, missingIsFine: Bool = false
  ) throws(BootBackendError) -> Int32? {
    while true {
      let fd = Glibc.open(path, flags, mode_t(0o644))
      if fd >= 0 { return fd }
      let code = errno
      if code == EINTR { continue }
      if code == ENOENT && missingIsFine { return nil }
      throw failure("open", path, code)
    }
  }

  private static func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(BootBackendError) {
    var done = 0
    while done < bytes.count {
      let put = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
      if put > 0 {
        done += put
      } else if put < 0 && errno == EINTR {
        continue
      } else {
        throw failure("write", path, put == 0 ? EIO : errno)
      }
    }
  }

  private static func retrying(_ operation: String, _ path: String, _ call: () -> Int32)
    throws(BootBackendError)
  {
    while call() != 0 {
      let code = errno
      if code == EINTR { continue }
      throw failure(operation, path, code)
    }
  }
}
