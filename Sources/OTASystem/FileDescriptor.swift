// An owning file descriptor: closed exactly once, by `close()` or when the last reference goes.
// Every read and write loops until all bytes are done; every failure is a `SystemError` naming the
// call and the path the descriptor was opened from.
import Glibc
import Synchronization

/// How to open a file. `O_CLOEXEC` is always added: no child process inherits a descriptor.
public struct OpenOptions: OptionSet, Sendable {
  public let rawValue: Int32
  public init(rawValue: Int32) { self.rawValue = rawValue }

  public static let readOnly = OpenOptions([])
  public static let writeOnly = OpenOptions(rawValue: O_WRONLY)
  public static let readWrite = OpenOptions(rawValue: O_RDWR)
  public static let create = OpenOptions(rawValue: O_CREAT)
  public static let truncate = OpenOptions(rawValue: O_TRUNC)
  public static let exclusive = OpenOptions(rawValue: O_EXCL)
  public static let directory = OpenOptions(rawValue: O_DIRECTORY)
  public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
  /// Fails (ELOOP) when the last component is a symbolic link.
  public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
}

/// What `stat` found: only the distinctions this project cares about.
public enum FileKind: Equatable, Sendable {
  case regular
  case blockDevice
  case directory
  case characterDevice
  case other
}

/// The parts of a `struct stat` this project uses.
public struct FileStatus: Equatable, Sendable {
  public var kind: FileKind
  public var size: UInt64
  /// Device and inode: the same open file has the same identity under any descriptor number.
  public var device: UInt64
  public var inode: UInt64
  /// The last change of the content (st_mtim), in nanoseconds since 1970.
  public var modified: Int64
  /// The permission bits (st_mode & 07777): who may read and write it.
  public var permissions: UInt32 = 0
  /// The owner's user id (st_uid).
  public var owner: UInt32 = 0

  init(_ info: stat) {
    switch info.st_mode & S_IFMT {
    case S_IFREG: kind = .regular
    case S_IFBLK: kind = .blockDevice
    case S_IFDIR: kind = .directory
    case S_IFCHR: kind = .characterDevice
    default: kind = .other
    }
    size = UInt64(max(0, info.st_size))
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
    modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    permissions = UInt32(info.st_mode & 0o7777)
    owner = UInt32(info.st_uid)
  }
}

public final class FileDescriptor: Sendable, CustomStringConvertible {
  /// The descriptor number, valid until `close()`. Do not close it yourself.
  public let rawValue: Int32
  /// What it was opened from (a path, or "socket"), for error messages.
  public let path: String
  private let closed = Atomic<Bool>(false)

  /// Takes ownership of `rawValue`: it is closed with this object.
  public init(taking rawValue: Int32, path: String) {
    self.rawValue = rawValue
    self.path = path
  }

  deinit {
    if !closed.load(ordering: .relaxed) {
      _ = SystemCalls.check(.close, path: path, descriptor: rawValue, retryingInterrupts: false) {
        Glibc.close(rawValue)
      }
    }
  }

  public var description: String { "fd \(rawValue) (\(path))" }

  /// `open(2)`. `mode` only matters with `.create`.
  public static func open(_ path: String, _ options: OpenOptions, mode: UInt32 = 0o644) throws(SystemError)
    -> FileDescriptor
  {
    let result = SystemCalls.perform(.open, path: path) { _ in
      Int(Glibc.open(path, options.rawValue | O_CLOEXEC, mode_t(mode)))
    }
    switch result {
    case .success(let descriptor): return FileDescriptor(taking: Int32(descriptor), path: path)
    case .failure(let code): throw SystemError(operation: "open", path: path, errno: code)
    }
  }

  /// `close(2)`, once: later calls do nothing. Not retried on EINTR (the descriptor is gone on Linux
  /// either way, and a retry could close a descriptor another thread has just been given).
  public func close() throws(SystemError) {
    guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
    let failure = SystemCalls.check(.close, path: path, descriptor: rawValue, retryingInterrupts: false) {
      Glibc.close(rawValue)
    }
    if let failure, failure != .interrupted { throw error("close", failure) }
  }

  /// Whether `close()` has run.
  public var isClosed: Bool { closed.load(ordering: .acquiring) }

  func error(_ operation: String, _ code: Errno) -> SystemError {
    SystemError(operation: operation, path: path, errno: code)
  }

  // MARK: Positional IO (files)

  /// Fills `buffer` from `offset`, stopping early only at end of file: the number of bytes read.
  public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(SystemError) -> Int {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
    let start = try fileOffset(offset, count: buffer.count, for: "pread")
    var done = 0
    while done < buffer.count {
      let result = SystemCalls.perform(.pread, path: path, descriptor: rawValue, count: buffer.count - done) {
        count in
        Glibc.pread(rawValue, base + done, count, start + off_t(done))
      }
      switch result {
      case .success(0): return done
      case .success(let got): done += got
      case .failure(let code): throw error("pread", code)
      }
    }
    return done
  }

  /// Writes all of `bytes` at `offset`, continuing after short writes while the kernel makes
  /// progress: the number written, less than `bytes.count` only when a write stored nothing.
  @discardableResult
  public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(SystemError) -> Int {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
    let start = try fileOffset(offset, count: bytes.count, for: "pwrite")
    var done = 0
    while done < bytes.count {
      let result = SystemCalls.perform(.pwrite, path: path, descriptor: rawValue, count: bytes.count - done) {
        count in
        Glibc.pwrite(rawValue, base + done, count, start + off_t(done))
      }
      switch result {
      case .success(0): return done
      case .success(let put): done += put
      case .failure(let code): throw error("pwrite", code)
      }
    }
    return done
  }

  /// `offset` as an `off_t`, refusing (EINVAL, as the kernel does for a negative offset) what does
  /// not fit together with `count` bytes after it, instead of trapping on the conversion.
  func fileOffset(_ offset: UInt64, count: Int, for operation: String) throws(SystemError) -> off_t {
    guard let start = off_t(exactly: offset), count >= 0, off_t.max - start >= off_t(count) else {
      throw error(operation, .invalidArgument)
    }
    return start
  }

  // MARK: Stream IO (pipes, sockets, whole files)

  /// One `read(2)`: the bytes there now (0 at end of file); nil when a non-blocking descriptor has
  /// nothing (EAGAIN).
  public func readSome(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
    let result = SystemCalls.perform(.read, path: path, descriptor: rawValue, count: buffer.count) { count in
      Glibc.read(rawValue, buffer.baseAddress, count)
    }
    switch result {
    case .success(let got): return got
    case .failure(.wouldBlock): return nil
    case .failure(let code): throw error("read", code)
    }
  }

  /// Writes all of `bytes` with `write(2)`, continuing after short writes: the number written, less
  /// than `bytes.count` only when a write stored nothing.
  @discardableResult
  public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int {
    guard let base = bytes.baseAddress else { return 0 }
    var done = 0
    while done < bytes.count {
      let result = SystemCalls.perform(.write, path: path, descriptor: rawValue, count: bytes.count - done) {
        count in
        Glibc.write(rawValue, base + done, count)
      }
      switch result {
      case .success(0): return done
      case .success(let put): done += put
      case .failure(let code): throw error("write", code)
      }
    }
    return done
  }

  // MARK: Metadata

  /// `fsync(2)`: data and all metadata. Also how a directory's entries are made durable.
  public func sync() throws(SystemError) {
    if let code = SystemCalls.check(.fsync, path: path, descriptor: rawValue, { Glibc.fsync(rawValue) }) {
      throw error("fsync", code)
    }
  }

  /// `fdatasync(2)`: the data and the metadata needed to read it back (the size), not the times.
  public func dataSync() throws(SystemError) {
    if let code = SystemCalls.check(
      .fdatasync, path: path, descriptor: rawValue, { Glibc.fdatasync(rawValue) })
    {
      throw error("fdatasync", code)
    }
  }

  /// `ftruncate(2)`: sets the file's length (a regular file grows sparse, without writing zeros).
  public func truncate(to length: UInt64) throws(SystemError) {
    let end = try fileOffset(length, count: 0, for: "ftruncate")
    if let code = SystemCalls.check(
      .ftruncate, path: path, descriptor: rawValue, { Glibc.ftruncate(rawValue, end) })
    {
      throw error("ftruncate", code)
    }
  }

  /// `fstat(2)`.
  public func status() throws(SystemError) -> FileStatus {
    var info = stat()
    if let code = SystemCalls.check(
      .fstat, path: path, descriptor: rawValue, { Glibc.fstat(rawValue, &info) })
    {
      throw error("fstat", code)
    }
    return FileStatus(info)
  }

  /// The offset of the end of the file: a block device's size, which `fstat` reports as 0.
  public func endOffset() throws(SystemError) -> UInt64 {
    let result = SystemCalls.perform(.lseek, descriptor: rawValue) { _ in
      Int(Glibc.lseek(rawValue, 0, SEEK_END))
    }
    switch result {
    case .success(let end): return UInt64(end)
    case .failure(let code): throw error("lseek", code)
    }
  }

  /// A close-on-exec duplicate, owned by the caller.
  public func duplicate() throws(SystemError) -> FileDescriptor {
    try Self.duplicating(rawValue, path: path)
  }

  /// A close-on-exec duplicate of a descriptor this object does not own (which stays the caller's).
  public static func duplicating(_ rawValue: Int32, path: String) throws(SystemError) -> FileDescriptor {
    let result = SystemCalls.perform(.fcntl, descriptor: rawValue) { _ in
      Int(fcntl(rawValue, F_DUPFD_CLOEXEC, 0))
    }
    switch result {
    case .success(let copy): return FileDescriptor(taking: Int32(copy), path: path)
    case .failure(let code): throw SystemError(operation: "fcntl F_DUPFD_CLOEXEC", path: path, errno: code)
    }
  }

  /// From now on reads and writes return at once instead of waiting.
  public func makeNonBlocking() throws(SystemError) {
    let flags = SystemCalls.perform(.fcntl, descriptor: rawValue) { _ in Int(fcntl(rawValue, F_GETFL)) }
    guard case .success(let current) = flags else {
      if case .failure(let code) = flags { throw error("fcntl O_NONBLOCK", code) }
      return
    }
    if let code = SystemCalls.check(
      .fcntl, descriptor: rawValue, { fcntl(rawValue, F_SETFL, Int32(current) | O_NONBLOCK) })
    {
      throw error("fcntl O_NONBLOCK", code)
    }
  }

  /// `flock(LOCK_EX)`: waits for an exclusive advisory lock, held until the descriptor closes.
  public func lockExclusively() throws(SystemError) {
    if let code = SystemCalls.check(.flock, path: path, descriptor: rawValue, { flock(rawValue, LOCK_EX) }) {
      throw error("flock", code)
    }
  }
}

extension FileDescriptor {
  /// `read(into:at:)` into a new array: up to `count` bytes, fewer only at end of file.
  public func read(at offset: UInt64, count: Int) throws(SystemError) -> [UInt8] {
    guard count > 0 else { return [] }
    var bytes = [UInt8](repeating: 0, count: count)
    let got = try bytes.withUnsafeMutableBytes { buffer in
      Result { () throws(SystemError) in try read(into: buffer, at: offset) }
    }.get()
    if got < count { bytes.removeLast(count - got) }
    return bytes
  }

  /// `count` bytes from `offset` mapped read-only (mmap, `MAP_SHARED`) for the time of `body`, then
  /// unmapped: the page cache's pages, nothing copied. The caller makes sure the file holds them
  /// (a mapping past a regular file's end faults when touched).
  public func withMappedBytes<R>(
    at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) -> R
  ) throws(SystemError) -> R {
    guard count > 0 else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
    let page = UInt64(max(4096, sysconf(Int32(_SC_PAGESIZE))))
    let start = offset / page * page
    let length = Int(offset - start) + count
    let result = SystemCalls.perform(.mmap, path: path, descriptor: rawValue, count: length) { _ in
      let mapped = Glibc.mmap(nil, length, PROT_READ, MAP_SHARED, rawValue, off_t(start))
      return mapped == MAP_FAILED ? -1 : Int(bitPattern: mapped)
    }
    let mapped: UnsafeMutableRawPointer
    switch result {
    case .success(let address):
      guard let pointer = UnsafeMutableRawPointer(bitPattern: address) else {
        throw error("mmap", Errno(rawValue: EINVAL))
      }
      mapped = pointer
    case .failure(let code): throw error("mmap", code)
    }
    defer {
      _ = SystemCalls.check(.munmap, path: path, descriptor: rawValue) { Glibc.munmap(mapped, length) }
    }
    return body(UnsafeRawBufferPointer(start: mapped + Int(offset - start), count: count))
  }

  /// `write(_:at:)` for an array.
  @discardableResult
  public func write(_ bytes: [UInt8], at offset: UInt64) throws(SystemError) -> Int {
    try bytes.withUnsafeBytes { buffer in Result { () throws(SystemError) in try write(buffer, at: offset) } }
      .get()
  }

  /// `write(_:)` for an array.
  @discardableResult
  public func write(_ bytes: [UInt8]) throws(SystemError) -> Int {
    try bytes.withUnsafeBytes { buffer in Result { () throws(SystemError) in try write(buffer) } }.get()
  }
}
