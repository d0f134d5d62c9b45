/// Files and names replaced so that after a power cut they hold the old or the new content, never a
/// mixture, and the change itself is on the medium before the call returns.
public enum DurableWrite {
  /// What a temporary file is called beside the file it will replace.
  public static let temporarySuffix = ".tmp"

  /// The classic sequence: write `path.tmp`, fsync it, close it, rename it over `path`, fsync the
  /// directory. The rename is atomic; the first fsync makes sure the renamed file has its content;
  /// the directory fsync makes the rename itself durable. `mode` applies to a newly created file.
  /// `exclusive`: the temporary file is made afresh with O_EXCL|O_NOFOLLOW (one an earlier power
  /// cut left is removed first), so that a link planted under its name is never followed.
  public static func replace(
    _ path: String, with bytes: [UInt8], mode: UInt32 = 0o644, exclusive: Bool = false
  ) throws(SystemError) {
    let temporary = path + temporarySuffix
    if exclusive { try FileSystem.unlinkIfPresent(temporary) }
    let options: OpenOptions =
      exclusive ? [.writeOnly, .create, .exclusive, .noFollow] : [.writeOnly, .create, .truncate]
    let file = try FileDescriptor.open(temporary, options, mode: mode)
    do throws(SystemError) {
      let written = try file.write(bytes, at: 0)
      // A regular file's pwrite stores nothing only when the file system is out of room.
      if written < bytes.count { throw SystemError(operation: "pwrite", path: temporary, errno: .noSpace) }
      try file.sync()
    } catch {
      try? file.close()
      throw error
    }
    try file.close()
    try rename(temporary, to: path)
  }

  /// `rename(2)` and then an fsync of the directory holding `to`, so that the new name survives a
  /// power cut.
  public static func rename(_ from: String, to: String) throws(SystemError) {
    try FileSystem.rename(from, to: to)
    try FileSystem.syncDirectory(FileSystem.parentDirectory(of: to))
  }

  /// Points the symbolic link `path` at `target` atomically: a new link `path.tmp` renamed over
  /// `path`, then the directory fsynced. A `path.tmp` left by an earlier power cut is replaced.
  public static func replaceSymbolicLink(_ path: String, pointingAt target: String) throws(SystemError) {
    let temporary = path + temporarySuffix
    try FileSystem.unlinkIfPresent(temporary)
    try FileSystem.makeSymbolicLink(temporary, pointingAt: target)
    try rename(temporary, to: path)
  }
}
