import OTASystem

/// The gateway's own files in its state directory (partial downloads, the journal, the bindings):
/// made with O_CREAT|O_EXCL|O_NOFOLLOW and mode 0600, reopened with O_NOFOLLOW. A symbolic link
/// someone planted under one of these names (in a shared or badly permissioned directory) is
/// refused, never followed to a file elsewhere, and no other user reads what the gateway keeps.
public enum PrivateFile {
  /// A new file at `path`, which must not exist (not even as a dangling link).
  public static func create(_ path: String) throws(SystemError) -> FileDescriptor {
    try FileDescriptor.open(path, [.readWrite, .create, .exclusive, .noFollow], mode: 0o600)
  }

  /// The file at `path` for reading and writing, nil when there is none; a link there is refused.
  public static func openExisting(_ path: String) throws(SystemError) -> FileDescriptor? {
    do {
      return try FileDescriptor.open(path, [.readWrite, .noFollow])
    } catch  where error.errno == .noSuchFile {
      return nil
    }
  }

  /// `path` replaced durably (the old or the new content after a power cut): a fresh `path.tmp`
  /// made exclusively (one left by an earlier cut is removed first), written, synced, renamed.
  public static func replace(_ path: String, with bytes: [UInt8]) throws(SystemError) {
    try DurableWrite.replace(path, with: bytes, mode: 0o600, exclusive: true)
  }

}
