#if canImport(Glibc)
  import Glibc
#endif

/// Small whole files read at once and replaced so that after a power cut they hold the old or the new
/// content, never a mixture: the record store's records, and the files and links of bootloader
/// backends (autoboot.txt, the file backend's symlink).
public enum DurableFile {
  /// The whole file, or nil if there is no such file. Files whose size the kernel does not report
  /// (/proc/cmdline) are read to their end too.
  public static func contents(of path: String) throws(StorageError) -> [UInt8]? {
    let file: POSIXFile
    do throws(StorageError) {
      file = try POSIXFile.open(path, flags: POSIXFile.readOnly)
    } catch {
      if case .system(_, _, let code) = error, code == SystemErrno.notFound { return nil }
      throw error
    }
    do throws(StorageError) {
      let bytes = try readAll(file)
      try file.close()
      return bytes
    } catch {
      try? file.close()
      throw error
    }
  }

  /// The classic sequence: write `path.tmp`, fsync it, rename it over `path`, fsync the directory.
  /// The rename is atomic; the first fsync makes sure the renamed file has its content; the directory
  /// fsync makes the rename itself durable before this returns.
  public static func replace(_ path: String, with bytes: [UInt8]) throws(StorageError) {
    let temporary = path + RecordName.temporarySuffix
    let file = try POSIXFile.open(temporary, flags: POSIXFile.writeTruncateCreate)
    do throws(StorageError) {
      try file.write(bytes, at: 0)
      try file.sync()
    } catch {
      try? file.close()
      throw error
    }
    try file.close()
    try POSIX.rename(temporary, to: path)
    try POSIX.syncDirectory(POSIX.parentDirectory(of: path))
  }

  /// Where the symbolic link at `path` points, or nil when there is nothing at `path`. Something that
  /// is not a symbolic link fails with `readlink` and EINVAL.
  public static func symbolicLinkTarget(_ path: String) throws(StorageError) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = buffer.withUnsafeMutableBufferPointer { pointer -> Int in
      guard let base = pointer.baseAddress else { return -1 }
      return Glibc.readlink(path, base, pointer.count - 1)
    }
    if count >= 0 {
      return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    let code = errno
    if code == ENOENT { return nil }
    throw .system(operation: "readlink", path: path, errno: code)
  }

  /// Points the symbolic link `path` at `target` atomically: a new link `path.tmp` renamed over
  /// `path`, then the directory fsynced. A `path.tmp` left by an earlier power cut is replaced.
  public static func replaceSymbolicLink(_ path: String, pointingAt target: String) throws(StorageError) {
    let temporary = path + RecordName.temporarySuffix
    try POSIX.unlinkIfPresent(temporary)
    if Glibc.symlink(target, temporary) != 0 {
      throw .system(operation: "symlink", path: temporary, errno: errno)
    }
    try POSIX.rename(temporary, to: path)
    try POSIX.syncDirectory(POSIX.parentDirectory(of: path))
  }

  /// The whole file, read in chunks until end of file (the size from fstat is only a first guess).
  private static func readAll(_ file: POSIXFile) throws(StorageError) -> [UInt8] {
    let expected = try file.status().size
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Int(clamping: expected))
    // One read normally does it: asking for one byte more than fstat said finds the end of file.
    let chunk = max(4096, Int(clamping: min(expected, 1 << 20)) + 1)
    while true {
      let part = try file.read(at: UInt64(bytes.count), count: chunk)
      bytes.append(contentsOf: part)
      if part.count < chunk { return bytes }
    }
  }
}
