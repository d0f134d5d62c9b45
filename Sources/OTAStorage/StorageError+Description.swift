// What a storage failure says to a person: the operation, the path and the system's own words for
// errno (strerror), then what to do about it. otad logs this; the central only sees 0x0B.
import OTASystem

extension StorageError: CustomStringConvertible {
  /// `pwrite /var/lib/otad/b.img: File too large (errno 27)`: what failed, where, and why.
  public var description: String {
    switch self {
    case .system(let operation, let path, let code):
      "\(operation) \(path): \(code) (errno \(code.rawValue))"
    case .shortWrite(let expected, let written):
      "a write stored \(written) of \(expected) bytes and then nothing more"
    case .outOfBounds(let offset, let count, let capacity):
      "\(count) bytes at offset \(offset) do not fit a slot of \(capacity) bytes"
    case .tooLarge(let size, let capacity):
      "an image of \(size) bytes does not fit a slot of \(capacity) bytes"
    case .runningSlotIsReadOnly(let what):
      "refused to write the running slot (\(what))"
    case .unusableSlot(let path, let reason):
      "\(path) \(reason)"
    case .bootloader(let what):
      "the bootloader's pointer: \(what)"
    case .powerCut:
      "the (simulated) power was cut"
    }
  }

  /// What the device's owner can do about it, or nil when the description says it all.
  public var remedy: String? {
    switch self {
    case .system(_, let path, let code):
      switch code {
      case .noSpace, .quotaExceeded:
        "the file system holding \(path) is full: free space there (or give otad another path)"
      case .fileTooLarge:
        "the file is at a size limit (the file system's, or otad's RLIMIT_FSIZE): raise it or use another path"
      case .readOnlyFileSystem:
        "\(path) is on a read-only file system: mount it read-write, or configure a writable path"
      case .permissionDenied, .notPermitted:
        "otad may not change \(path): fix its owner and mode, or run otad as a user who may"
      case .notDirectory:
        "a part of \(path) is a file, not a directory: remove it or configure another path"
      case .isDirectory:
        "\(path) is a directory: configure a file there instead"
      case .io:
        "the medium reports an I/O error: check the kernel log (dmesg); the storage may be failing"
      default:
        nil
      }
    case .shortWrite:
      "the medium stopped taking data (full, or failing): check its free space and the kernel log"
    default:
      nil
    }
  }

  /// The description, then the remedy when there is one: a whole line for a log or a terminal.
  public var explanation: String {
    remedy.map { "\(description): \($0)" } ?? description
  }
}
