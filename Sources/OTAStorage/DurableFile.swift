import OTASystem

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
      if case .system(_, _, let code) = error, code == .noSuchFile { return nil }
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

  /// The classic sequence (OTASystem's durable write): write `path.tmp`, fsync it, rename it over
  /// `path`, fsync the directory. After a power cut `path` holds the old or the new bytes.
  public static func replace(_ path: String, with bytes: [UInt8]) throws(StorageError) {
    try storage { () throws(SystemError) in try DurableWrite.replace(path, with: bytes) }
  }

  /// Where the symbolic link at `path` points, or nil when there is nothing at `path`. Something that
  /// is not a symbolic link fails with `readlink` and EINVAL.
  public static func symbolicLinkTarget(_ path: String) throws(StorageError) -> String? {
    try storage { () throws(SystemError) in try FileSystem.symbolicLinkTarget(path) }
  }

  /// Points the symbolic link `path` at `target` atomically: a new link `path.tmp` renamed over
  /// `path`, then the directory fsynced. A `path.tmp` left by an earlier power cut is replaced.
  public static func replaceSymbolicLink(_ path: String, pointingAt target: String) throws(StorageError) {
    try storage { () throws(SystemError) in try DurableWrite.replaceSymbolicLink(path, pointingAt: target) }
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
