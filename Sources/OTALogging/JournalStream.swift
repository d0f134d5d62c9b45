import OTASystem

/// Whether standard error is the journal's stream. systemd.exec(5): a service whose standard error
/// is connected to the journal gets JOURNAL_STREAM=DEVICE:INODE, the stream's identity; a process
/// whose standard error was redirected since (a pipe, a file) has another device and inode, and
/// writes there as anywhere else.
public enum JournalStream {
  /// The device and inode JOURNAL_STREAM names ("8:123456", both decimal), or nil when it is
  /// malformed.
  public static func identity(_ value: String) -> (device: UInt64, inode: UInt64)? {
    let parts = value.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return nil }
    return (device, inode)
  }

  /// True when `variable` (JOURNAL_STREAM's value, nil when unset) names the open file `file` (its
  /// device and inode, nil when it could not be read).
  public static func matches(_ variable: String?, _ file: (device: UInt64, inode: UInt64)?) -> Bool {
    guard let variable, let file, let identity = identity(variable) else { return false }
    return identity.device == file.device && identity.inode == file.inode
  }

  /// This process's standard error, checked against its JOURNAL_STREAM.
  public static var isStandardError: Bool {
    let status = try? StandardStreams.errorStatus()
    return matches(ProcessEnvironment.value("JOURNAL_STREAM"), status.map { ($0.device, $0.inode) })
  }
}
