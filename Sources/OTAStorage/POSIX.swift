// OTAStorage's view of the system layer: OTASystem's descriptors and path calls with their
// `SystemError`s turned into `StorageError`s, and short writes into `.shortWrite`.
import OTASystem

extension StorageError {
  /// The same call, path and errno as a storage error.
  init(_ error: SystemError) {
    self = .system(operation: error.operation, path: error.path, errno: error.errno)
  }
}

/// Runs a system-layer call, its failure as a `StorageError`.
@inline(__always)
func storage<T>(_ body: () throws(SystemError) -> T) throws(StorageError) -> T {
  do {
    return try body()
  } catch {
    throw StorageError(error)
  }
}

/// An open file and the path it was opened from (for error messages). The descriptor is owned by
/// OTASystem's `FileDescriptor`: `close()` closes it once, and dropping the last copy closes it too.
struct POSIXFile: Sendable {
  let descriptor: FileDescriptor

  var fileDescriptor: Int32 { descriptor.rawValue }
  var path: String { descriptor.path }

  static func open(_ path: String, flags: OpenOptions, mode: UInt32 = 0o644) throws(StorageError) -> POSIXFile
  {
    POSIXFile(
      descriptor: try storage { () throws(SystemError) in try FileDescriptor.open(path, flags, mode: mode) })
  }

  static let readOnly: OpenOptions = .readOnly
  /// Read-only, but a missing file is created empty (a never-written slot reads as zeros). The
  /// descriptor stays read-only: the kernel does not keep `O_CREAT` in the open file's flags.
  static let readOnlyCreate: OpenOptions = [.readOnly, .create]
  static let readWriteCreate: OpenOptions = [.readWrite, .create]
  static let writeTruncateCreate: OpenOptions = [.writeOnly, .create, .truncate]

  func close() throws(StorageError) {
    try storage { () throws(SystemError) in try descriptor.close() }
  }

  /// Up to `count` bytes from `offset`: fewer only at end of file.
  func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
    try storage { () throws(SystemError) in try descriptor.read(at: offset, count: count) }
  }

  /// Every byte of `bytes` at `offset`; a write that stores nothing throws `.shortWrite` with the
  /// total so far.
  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
    let written = try storage { () throws(SystemError) in try descriptor.write(bytes, at: offset) }
    if written < bytes.count { throw .shortWrite(expected: bytes.count, written: written) }
  }

  func dataSync() throws(StorageError) {
    try storage { () throws(SystemError) in try descriptor.dataSync() }
  }

  func sync() throws(StorageError) {
    try storage { () throws(SystemError) in try descriptor.sync() }
  }

  func truncate(to length: UInt64) throws(StorageError) {
    try storage { () throws(SystemError) in try descriptor.truncate(to: length) }
  }

  func status() throws(StorageError) -> FileStatus {
    try storage { () throws(SystemError) in try descriptor.status() }
  }

  func endOffset() throws(StorageError) -> UInt64 {
    try storage { () throws(SystemError) in try descriptor.endOffset() }
  }
}

/// Path-level calls as storage errors.
enum POSIX {
  static func status(ofPath path: String) throws(StorageError) -> FileStatus? {
    try storage { () throws(SystemError) in try FileSystem.status(ofPath: path) }
  }

  @discardableResult
  static func rename(_ from: String, to: String, missingIsFine: Bool = false) throws(StorageError) -> Bool {
    try storage { () throws(SystemError) in try FileSystem.rename(from, to: to, missingIsFine: missingIsFine)
    }
  }

  static func unlinkIfPresent(_ path: String) throws(StorageError) {
    try storage { () throws(SystemError) in try FileSystem.unlinkIfPresent(path) }
  }

  /// `mkdir -p`: creates `path` and any missing parents (mode 0755). Each new directory's parent is
  /// fsynced so that the directory itself survives a power cut.
  static func makeDirectories(_ path: String) throws(StorageError) {
    if let existing = try status(ofPath: path) {
      guard existing.kind == .directory else {
        throw .system(operation: "mkdir", path: path, errno: .notDirectory)
      }
      return
    }
    let parent = parentDirectory(of: path)
    if parent != path { try makeDirectories(parent) }
    try storage { () throws(SystemError) in try FileSystem.makeDirectory(path) }
    try syncDirectory(parent)
  }

  static func syncDirectory(_ path: String) throws(StorageError) {
    try storage { () throws(SystemError) in try FileSystem.syncDirectory(path) }
  }

  static func parentDirectory(of path: String) -> String { FileSystem.parentDirectory(of: path) }
}
