// Path-level calls: the ones that change or read directory entries rather than a file's bytes.
import Glibc

public enum FileSystem {
  /// `stat(2)` (following symbolic links, so `/dev/disk/by-partlabel/...` works); nil if missing.
  public static func status(ofPath path: String) throws(SystemError) -> FileStatus? {
    var info = stat()
    switch SystemCalls.check(.stat, path: path, { stat(path, &info) }) {
    case nil: return FileStatus(info)
    case .noSuchFile?: return nil
    case let code?: throw SystemError(operation: "stat", path: path, errno: code)
    }
  }

  /// Whether `path` is a regular file this process may execute.
  public static func isExecutableFile(_ path: String) -> Bool {
    guard (try? status(ofPath: path))??.kind == .regular else { return false }
    return SystemCalls.check(.access, path: path, { access(path, X_OK) }) == nil
  }

  /// `rename(2)`: atomically replaces `to`. Returns false when `from` does not exist and
  /// `missingIsFine`.
  @discardableResult
  public static func rename(_ from: String, to: String, missingIsFine: Bool = false) throws(SystemError)
    -> Bool
  {
    switch SystemCalls.check(.rename, path: from, { Glibc.rename(from, to) }) {
    case nil: return true
    case .noSuchFile? where missingIsFine: return false
    case let code?: throw SystemError(operation: "rename", path: from, errno: code)
    }
  }

  /// `unlink(2)`; a missing file is not an error (the goal, no such file, holds).
  public static func unlinkIfPresent(_ path: String) throws(SystemError) {
    switch SystemCalls.check(.unlink, path: path, { Glibc.unlink(path) }) {
    case nil, .noSuchFile?: return
    case let code?: throw SystemError(operation: "unlink", path: path, errno: code)
    }
  }

  /// `mkdir(2)` with mode 0755; an existing entry is not an error (callers check what it is).
  public static func makeDirectory(_ path: String) throws(SystemError) {
    switch SystemCalls.check(.mkdir, path: path, { Glibc.mkdir(path, 0o755) }) {
    case nil, .exists?: return
    case let code?: throw SystemError(operation: "mkdir", path: path, errno: code)
    }
  }

  /// Where the symbolic link at `path` points, or nil when there is nothing at `path`. Something that
  /// is not a symbolic link fails with `readlink` and EINVAL.
  public static func symbolicLinkTarget(_ path: String) throws(SystemError) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let result = buffer.withUnsafeMutableBufferPointer { pointer in
      SystemCalls.perform(.readlink, path: path, count: pointer.count - 1) { count in
        guard let base = pointer.baseAddress else { return -1 }
        return Glibc.readlink(path, base, count)
      }
    }
    switch result {
    case .success(let count):
      return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    case .failure(.noSuchFile): return nil
    case .failure(let code): throw SystemError(operation: "readlink", path: path, errno: code)
    }
  }

  /// `symlink(2)`: a new link at `path` pointing at `target`.
  public static func makeSymbolicLink(_ path: String, pointingAt target: String) throws(SystemError) {
    if let code = SystemCalls.check(.symlink, path: path, { Glibc.symlink(target, path) }) {
      throw SystemError(operation: "symlink", path: path, errno: code)
    }
  }

  /// Opens a directory and fsyncs it: makes renames, creations and unlinks in it durable.
  public static func syncDirectory(_ path: String) throws(SystemError) {
    let directory = try FileDescriptor.open(path, .directory)
    do throws(SystemError) {
      try directory.sync()
    } catch {
      try? directory.close()
      throw error
    }
    try directory.close()
  }

  /// The directory part of a path: "/a/b" -> "/a", "b" -> ".", "/" -> "/".
  public static func parentDirectory(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    if slash == trimmed.startIndex { return "/" }
    return String(trimmed[..<slash])
  }
}
