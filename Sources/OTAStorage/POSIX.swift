// The one file of OTAStorage that talks to the kernel about files. Everything above it sees typed
// `StorageError`s instead of -1 and errno, and never has to remember EINTR or short writes.
import Glibc

/// The errno values the rest of the module names without importing Glibc.
public enum SystemErrno {
  public static let io: Int32 = EIO
  public static let noSpace: Int32 = ENOSPC
  public static let invalid: Int32 = EINVAL
  public static let notFound: Int32 = ENOENT
}

/// What `fstat` or `stat` found at a path: only the distinctions a slot or record store cares about.
enum FileKind: Equatable, Sendable {
  case regular
  case blockDevice
  case directory
  case characterDevice
  case other
}

/// The parts of a `struct stat` this module uses.
struct FileStatus: Sendable {
  var kind: FileKind
  var size: UInt64
}

/// An open file descriptor and the path it was opened from (for error messages).
///
/// A plain value with an explicit `close()`: the owner (a slot reader or writer class, or a function
/// body) decides when the descriptor ends, so there is no hidden second close.
struct POSIXFile: Sendable {
  let fileDescriptor: Int32
  let path: String

  /// `open(2)`, retried on EINTR. `mode` only matters with `O_CREAT`.
  static func open(_ path: String, flags: Int32, mode: mode_t = 0o644) throws(StorageError) -> POSIXFile {
    while true {
      let fd = Glibc.open(path, flags, mode)
      if fd >= 0 { return POSIXFile(fileDescriptor: fd, path: path) }
      let code = errno
      if code == EINTR { continue }
      throw .system(operation: "open", path: path, errno: code)
    }
  }

  /// The usual flags for slots and records: `O_CLOEXEC` everywhere, so no child process inherits them.
  static let readOnly: Int32 = O_RDONLY | O_CLOEXEC
  /// Read-only, but a missing file is created empty (a never-written slot reads as zeros). The
  /// descriptor stays read-only: the kernel does not keep `O_CREAT` in the open file's flags.
  static let readOnlyCreate: Int32 = O_RDONLY | O_CREAT | O_CLOEXEC
  static let readWriteCreate: Int32 = O_RDWR | O_CREAT | O_CLOEXEC
  static let writeTruncateCreate: Int32 = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC
  static let directory: Int32 = O_RDONLY | O_DIRECTORY | O_CLOEXEC

  /// `close(2)`. Not retried on EINTR: on Linux the descriptor is gone either way, and a retry could
  /// close a descriptor another thread has just been given.
  func close() throws(StorageError) {
    if Glibc.close(fileDescriptor) != 0 {
      let code = errno
      if code == EINTR { return }
      throw .system(operation: "close", path: path, errno: code)
    }
  }

  /// Up to `count` bytes from `offset`: fewer only at end of file. Retried on EINTR and partial reads.
  func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
    guard count > 0 else { return [] }
    let start = try fileOffset(offset, count: count, for: "pread")
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    var failure: Int32 = 0
    bytes.withUnsafeMutableBytes { buffer in
      guard let base = buffer.baseAddress else { return }
      while done < count {
        let got = Glibc.pread(fileDescriptor, base + done, count - done, start + off_t(done))
        if got > 0 {
          done += got
        } else if got == 0 {
          return
        } else {
          let code = errno
          if code == EINTR { continue }
          failure = code
          return
        }
      }
    }
    if failure != 0 { throw .system(operation: "pread", path: path, errno: failure) }
    if done < count { bytes.removeLast(count - done) }
    return bytes
  }

  /// Every byte of `bytes` at `offset`. Retried on EINTR and after partial writes while the kernel
  /// makes progress; a write that stores nothing throws `.shortWrite` with the total so far.
  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    let start = try fileOffset(offset, count: bytes.count, for: "pwrite")
    var done = 0
    while done < bytes.count {
      let put = Glibc.pwrite(fileDescriptor, base + done, bytes.count - done, start + off_t(done))
      if put > 0 {
        done += put
      } else if put == 0 {
        throw .shortWrite(expected: bytes.count, written: done)
      } else {
        let code = errno
        if code == EINTR { continue }
        throw .system(operation: "pwrite", path: path, errno: code)
      }
    }
  }

  /// `write(_:at:)` for an array. (`withUnsafeBytes` only rethrows untyped errors, hence the detour.)
  func write(_ bytes: [UInt8], at offset: UInt64) throws(StorageError) {
    let failure = bytes.withUnsafeBytes { buffer -> StorageError? in
      do throws(StorageError) {
        try write(buffer, at: offset)
        return nil
      } catch {
        return error
      }
    }
    if let failure { throw failure }
  }

  /// `fdatasync(2)`: the data and the metadata needed to read it back (the size), not the times.
  func dataSync() throws(StorageError) {
    try retrying("fdatasync") { Glibc.fdatasync(fileDescriptor) }
  }

  /// `fsync(2)`: data and all metadata. Also how a directory's entries are made durable.
  func sync() throws(StorageError) {
    try retrying("fsync") { Glibc.fsync(fileDescriptor) }
  }

  /// `ftruncate(2)`: sets the file's length (a regular file grows sparse, without writing zeros).
  func truncate(to length: UInt64) throws(StorageError) {
    let end = try fileOffset(length, count: 0, for: "ftruncate")
    try retrying("ftruncate") { Glibc.ftruncate(fileDescriptor, end) }
  }

  /// `offset` as an `off_t`, refusing (EINVAL, as the kernel does for a negative offset) what does
  /// not fit together with `count` bytes after it, instead of trapping on the conversion.
  private func fileOffset(_ offset: UInt64, count: Int, for operation: String) throws(StorageError) -> off_t {
    guard let start = off_t(exactly: offset), count >= 0, off_t.max - start >= off_t(count) else {
      throw .system(operation: operation, path: path, errno: EINVAL)
    }
    return start
  }

  /// `fstat(2)`.
  func status() throws(StorageError) -> FileStatus {
    var info = stat()
    try retrying("fstat") { Glibc.fstat(fileDescriptor, &info) }
    return FileStatus(info)
  }

  /// The offset of the end of the file: a block device's size, which `fstat` reports as 0.
  func endOffset() throws(StorageError) -> UInt64 {
    let end = Glibc.lseek(fileDescriptor, 0, SEEK_END)
    if end < 0 { throw .system(operation: "lseek", path: path, errno: errno) }
    return UInt64(end)
  }

  private func retrying(_ operation: String, _ call: () -> Int32) throws(StorageError) {
    while call() != 0 {
      let code = errno
      if code == EINTR { continue }
      throw .system(operation: operation, path: path, errno: code)
    }
  }
}

extension FileStatus {
  init(_ info: stat) {
    let kind: FileKind
    switch info.st_mode & S_IFMT {
    case S_IFREG: kind = .regular
    case S_IFBLK: kind = .blockDevice
    case S_IFDIR: kind = .directory
    case S_IFCHR: kind = .characterDevice
    default: kind = .other
    }
    self.init(kind: kind, size: UInt64(max(0, info.st_size)))
  }
}

/// Path-level calls: the ones that change directory entries rather than a file's bytes.
enum POSIX {
  /// `stat(2)` (following symbolic links, so `/dev/disk/by-partlabel/...` works); nil if missing.
  static func status(ofPath path: String) throws(StorageError) -> FileStatus? {
    var info = stat()
    if stat(path, &info) == 0 { return FileStatus(info) }
    let code = errno
    if code == ENOENT { return nil }
    throw .system(operation: "stat", path: path, errno: code)
  }

  /// `rename(2)`: atomically replaces `to`. Returns false when `from` does not exist.
  @discardableResult
  static func rename(_ from: String, to: String, missingIsFine: Bool = false) throws(StorageError) -> Bool {
    if Glibc.rename(from, to) == 0 { return true }
    let code = errno
    if code == ENOENT && missingIsFine { return false }
    throw .system(operation: "rename", path: from, errno: code)
  }

  /// `unlink(2)`; a missing file is not an error (the goal, no such file, holds).
  static func unlinkIfPresent(_ path: String) throws(StorageError) {
    if Glibc.unlink(path) == 0 { return }
    let code = errno
    if code == ENOENT { return }
    throw .system(operation: "unlink", path: path, errno: code)
  }

  /// `mkdir -p`: creates `path` and any missing parents (mode 0755). Each new directory's parent is
  /// fsynced so that the directory itself survives a power cut.
  static func makeDirectories(_ path: String) throws(StorageError) {
    if let existing = try status(ofPath: path) {
      guard existing.kind == .directory else {
        throw .system(operation: "mkdir", path: path, errno: ENOTDIR)
      }
      return
    }
    let parent = parentDirectory(of: path)
    if parent != path { try makeDirectories(parent) }
    if Glibc.mkdir(path, 0o755) != 0 {
      let code = errno
      if code != EEXIST { throw .system(operation: "mkdir", path: path, errno: code) }
    }
    try syncDirectory(parent)
  }

  /// Opens a directory with `O_DIRECTORY` and fsyncs it: makes renames, creations and unlinks in it
  /// durable.
  static func syncDirectory(_ path: String) throws(StorageError) {
    let directory = try POSIXFile.open(path, flags: POSIXFile.directory)
    do throws(StorageError) {
      try directory.sync()
    } catch {
      try? directory.close()
      throw error
    }
    try directory.close()
  }

  /// The directory part of a path: "/a/b" -> "/a", "b" -> ".", "/" -> "/".
  static func parentDirectory(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    if slash == trimmed.startIndex { return "/" }
    return String(trimmed[..<slash])
  }
}
