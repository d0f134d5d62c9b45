import OTASystem

/// Small records in one directory, each replaced atomically: after a power cut a record is wholly the
/// old version or wholly the new one, never a mixture and never empty.
///
/// `replace` is `DurableFile.replace`: write `name.tmp`, fsync it, rename it over `name`, fsync the
/// directory.
public final class FileRecordStore: RecordStore {
  /// The directory holding the records.
  public let directory: String

  /// Uses `directory`, creating it and any missing parents.
  public init(directory: String) throws(StorageError) {
    self.directory = directory
    try POSIX.makeDirectories(directory)
  }

  /// Creates and removes a file here, so that a directory otad cannot write (a read-only mount, the
  /// wrong owner) stops it at start-up with the reason, not at the first PREPARE.
  public func checkWritable() throws(StorageError) {
    let path = try path(of: "write-check" + RecordName.temporarySuffix)
    let file = try POSIXFile.open(path, flags: POSIXFile.writeTruncateCreate)
    try? file.close()
    try POSIX.unlinkIfPresent(path)
  }

  /// The record's bytes, or nil if there is no such record.
  public func load(_ name: String) throws(StorageError) -> [UInt8]? {
    try DurableFile.contents(of: try path(of: name))
  }

  public func replace(_ name: String, with bytes: [UInt8]) throws(StorageError) {
    try DurableFile.replace(try path(of: name), with: bytes)
  }

  /// pwrite and fdatasync on the record itself: the file's size and name do not change, so no
  /// metadata waits on the disk but the data.
  public func overwrite(_ name: String, at offset: Int, with bytes: [UInt8]) throws(StorageError) {
    guard offset >= 0 else { throw .system(operation: "pwrite", path: name, errno: Errno.invalidArgument) }
    let file = try POSIXFile.open(try path(of: name), flags: .writeOnly)
    do throws(StorageError) {
      // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
      let written = bytes.withUnsafeBytes { buffer in
        Result { () throws(StorageError) in try file.write(buffer, at: UInt64(offset)) }
      }
      try written.get()
      try file.dataSync()
    } catch {
      try? file.close()
      throw error
    }
    try file.close()
  }

  /// Deletes the record; a missing record is fine. The directory is synced either way, so that an
  /// earlier unlink interrupted before its sync is made durable too.
  public func remove(_ name: String) throws(StorageError) {
    let path = try path(of: name)
    try POSIX.unlinkIfPresent(path)
    try POSIX.syncDirectory(directory)
  }

  /// Renames `name` to `name.damaged`, replacing an older one. A missing record is fine: it makes the
  /// call safe to repeat after a power cut that may or may not have kept the rename.
  public func moveAside(_ name: String) throws(StorageError) {
    let path = try path(of: name)
    try POSIX.rename(path, to: path + RecordName.damagedSuffix, missingIsFine: true)
    try POSIX.syncDirectory(directory)
  }

  private func path(of name: String) throws(StorageError) -> String {
    try RecordName.validate(name)
    return directory.hasSuffix("/") ? directory + name : directory + "/" + name
  }
}

/// The rules for record names, shared by `FileRecordStore` and every other `RecordStore` (the tests'
/// in-memory one) so all refuse alike.
public enum RecordName {
  public static let temporarySuffix = ".tmp"
  public static let damagedSuffix = ".damaged"
  /// Leaves room for the suffixes under the usual 255-byte file name limit.
  public static let maximumLength = 200

  /// Only `[A-Za-z0-9._-]`, not empty, not "." or "..": a name can never leave the directory.
  public static func validate(_ name: String) throws(StorageError) {
    let allowed = name.utf8.allSatisfy { byte in
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
        true
      default:
        false
      }
    }
    guard allowed, !name.isEmpty, name.utf8.count <= maximumLength, name != ".", name != ".." else {
      throw .system(operation: "name", path: name, errno: Errno.invalidArgument)
    }
  }
}
