// Whole files and directory trees: what the executables read, list, create and remove by path.
import Glibc

extension FileSystem {
  /// Whether anything is at `path` (following symbolic links): false when missing or unreadable.
  public static func exists(_ path: String) -> Bool {
    (try? status(ofPath: path)).flatMap { $0 } != nil
  }

  /// What is at `path` (following symbolic links), or nil when nothing is.
  public static func kind(ofPath path: String) throws(SystemError) -> FileKind? {
    try status(ofPath: path)?.kind
  }

  /// Every byte of the file at `path`, read until end of file (so `/proc` files, whose size says 0,
  /// read whole too).
  public static func readFile(_ path: String) throws(SystemError) -> [UInt8] {
    let file = try FileDescriptor.open(path, .readOnly)
    var bytes: [UInt8] = []
    do throws(SystemError) {
      while true {
        let chunk = try file.read(at: UInt64(bytes.count), count: 64 * 1024)
        bytes += chunk
        if chunk.count < 64 * 1024 { break }
      }
    } catch {
      try? file.close()
      throw error
    }
    try file.close()
    return bytes
  }

  /// At most `limit` bytes of the regular file at `path`, never through a symbolic link (O_NOFOLLOW):
  /// for small files another user may write (a lock file). Nil when the file is larger, or is not
  /// a regular file.
  public static func readSmallRegularFile(_ path: String, limit: Int) throws(SystemError) -> [UInt8]? {
    let file = try FileDescriptor.open(path, [.readOnly, .noFollow, .nonBlocking])
    defer { try? file.close() }
    let bytes = try file.read(at: 0, count: limit + 1)
    guard bytes.count <= limit, try FileSystem.status(ofPath: path)?.kind == .regular else { return nil }
    return bytes
  }

  /// `readFile`, but nil when there is no file at `path`.
  public static func readFileIfPresent(_ path: String) throws(SystemError) -> [UInt8]? {
    do throws(SystemError) {
      return try readFile(path)
    } catch  where error.errno == .noSuchFile {
      return nil
    }
  }

  /// `readFile` decoded as UTF-8 (invalid sequences become U+FFFD).
  public static func readText(_ path: String) throws(SystemError) -> String {
    String(decoding: try readFile(path), as: UTF8.self)
  }

  /// Writes `bytes` to `path`, creating or truncating it, without the fsyncs of `DurableWrite`: for
  /// files a crash may lose (scratch files of a bench or a lab).
  public static func writeFile(_ path: String, _ bytes: [UInt8], mode: UInt32 = 0o644) throws(SystemError) {
    let file = try FileDescriptor.open(path, [.writeOnly, .create, .truncate], mode: mode)
    do throws(SystemError) {
      let written = try file.write(bytes, at: 0)
      if written < bytes.count { throw SystemError(operation: "pwrite", path: path, errno: .noSpace) }
    } catch {
      try? file.close()
      throw error
    }
    try file.close()
  }

  /// The names in the directory at `path`, without "." and "..", sorted.
  public static func directoryEntries(_ path: String) throws(SystemError) -> [String] {
    var stream: OpaquePointer?
    let opened = SystemCalls.perform(.opendir, path: path) { _ in
      stream = opendir(path)
      return stream == nil ? -1 : 0
    }
    if case .failure(let code) = opened { throw SystemError(operation: "opendir", path: path, errno: code) }
    guard let stream else { throw SystemError(operation: "opendir", path: path, errno: .invalidArgument) }
    defer { closedir(stream) }
    var names: [String] = []
    while true {
      var entry: UnsafeMutablePointer<dirent>?
      let result = SystemCalls.perform(.readdir, path: path) { _ in
        errno = 0
        entry = readdir(stream)
        return entry == nil && errno != 0 ? -1 : 0
      }
      if case .failure(let code) = result { throw SystemError(operation: "readdir", path: path, errno: code) }
      guard let entry else { break }
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
  }

  /// `mkdir -p`: `path` and every missing directory above it (mode 0755). Something other than a
  /// directory in the way fails with ENOTDIR.
  public static func makeDirectories(_ path: String) throws(SystemError) {
    if try kind(ofPath: path) == .directory { return }
    let parent = parentDirectory(of: path)
    if parent != path { try makeDirectories(parent) }
    try makeDirectory(path)
    if try kind(ofPath: path) != .directory {
      throw SystemError(operation: "mkdir", path: path, errno: .notDirectory)
    }
  }

  /// `rm -r`: the file, link or directory tree at `path`; nothing there is not an error. Symbolic
  /// links are removed, never followed.
  public static func removeTree(_ path: String) throws(SystemError) {
    var info = stat()
    switch SystemCalls.check(.lstat, path: path, { lstat(path, &info) }) {
    case nil: break
    case .noSuchFile?: return
    case let code?: throw SystemError(operation: "lstat", path: path, errno: code)
    }
    guard info.st_mode & S_IFMT == S_IFDIR else { return try unlinkIfPresent(path) }
    for name in try directoryEntries(path) { try removeTree(path + "/" + name) }
    switch SystemCalls.check(.rmdir, path: path, { rmdir(path) }) {
    case nil, .noSuchFile?: return
    case let code?: throw SystemError(operation: "rmdir", path: path, errno: code)
    }
  }
}
