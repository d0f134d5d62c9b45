import OTASystem
import OTAWire

/// Slots backed by the file system: a block device (a real partition, whose size is its capacity) or
/// a regular file (created on first use, as large as the configured capacity; sparse until written).
///
/// Holds only paths and a number, so it is trivially `Sendable`; every `open...` call opens a fresh
/// descriptor that the returned reader or writer owns and closes when it is released.
public final class FileSlotMedium: SlotMedium {
  /// Where each slot's bytes live.
  public let paths: SlotPair<String>
  /// The capacity of a slot that is a regular file. Block devices ignore it and use their own size.
  public let fileCapacity: UInt64

  public init(paths: SlotPair<String>, fileCapacity: UInt64) {
    self.paths = paths
    self.fileCapacity = fileCapacity
  }

  /// The configured path of `slot`.
  public func path(of slot: SlotID) -> String { paths[slot] }

  /// Opens read-only (`O_RDONLY`): this descriptor cannot change the slot, whatever a caller does.
  /// A missing regular file is created empty (it reads as zeros), exactly as for writing.
  public func openForReading(_ slot: SlotID) throws(StorageError) -> any SlotReader {
    FileSlotReader(try open(slot, flags: POSIXFile.readOnlyCreate))
  }

  /// Opens read-write, creating a missing regular file. Only `SlotAccess` should call this.
  public func openForWriting(_ slot: SlotID) throws(StorageError) -> any SlotWriter {
    FileSlotWriter(try open(slot, flags: POSIXFile.readWriteCreate))
  }

  private func open(_ slot: SlotID, flags: OpenOptions) throws(StorageError) -> OpenSlotFile {
    let path = path(of: slot)
    // Refuse the wrong kinds before opening: opening a FIFO would block, a directory would half work.
    if let status = try POSIX.status(ofPath: path), let reason = Self.unusableReason(status.kind) {
      throw .unusableSlot(path: path, reason: reason)
    }
    let file: POSIXFile
    do throws(StorageError) {
      file = try POSIXFile.open(path, flags: flags)
    } catch {
      if case .system(_, _, let code) = error, code == Errno.noSuchFile {
        throw .unusableSlot(path: path, reason: "does not exist and its directory does not exist either")
      }
      throw error
    }
    do throws(StorageError) {
      // Check again on the descriptor: the path may have changed between stat and open.
      let status = try file.status()
      switch status.kind {
      case .blockDevice:
        return OpenSlotFile(file: file, capacity: try file.endOffset(), isRegularFile: false)
      case .regular:
        return OpenSlotFile(file: file, capacity: fileCapacity, isRegularFile: true)
      case .directory, .characterDevice, .other:
        throw StorageError.unusableSlot(path: path, reason: Self.unusableReason(status.kind) ?? "unusable")
      }
    } catch {
      try? file.close()
      throw error
    }
  }

  /// Why a file of this kind cannot be a slot, or nil if it can.
  static func unusableReason(_ kind: FileKind) -> String? {
    switch kind {
    case .regular, .blockDevice: nil
    case .directory: "is a directory, not a block device or regular file"
    case .characterDevice: "is a character device, not a block device or regular file"
    case .other: "is a FIFO, socket or other special file, not a block device or regular file"
    }
  }
}

/// Checks that `count` bytes at `offset` lie inside a slot of `capacity` bytes, without overflowing.
public enum SlotBounds {
  public static func check(offset: UInt64, count: Int, capacity: UInt64) throws(StorageError) {
    guard count >= 0, offset <= capacity, UInt64(count) <= capacity - offset else {
      throw .outOfBounds(offset: offset, count: count, capacity: capacity)
    }
  }
}

/// An open slot descriptor with the facts that bound it. Shared by the reader and the writer.
struct OpenSlotFile: Sendable {
  let file: POSIXFile
  let capacity: UInt64
  /// A regular file may be shorter than `capacity` (sparse); a block device never is.
  let isRegularFile: Bool

  func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
    try SlotBounds.check(offset: offset, count: count, capacity: capacity)
    var bytes = try file.read(at: offset, count: count)
    // Past the end of a file that was never sized: the bytes a sparse file would hold.
    if bytes.count < count { bytes.append(contentsOf: repeatElement(0, count: count - bytes.count)) }
    return bytes
  }
}

/// What the reader and the writer share: an open slot file, read the same way.
protocol OpenSlotHolder: SlotReader {
  var slot: OpenSlotFile { get }
}

extension OpenSlotHolder {
  var capacity: UInt64 { slot.capacity }

  /// The descriptor, for tests that check how it was opened.
  var fileDescriptor: Int32 { slot.file.fileDescriptor }

  func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
    try slot.read(at: offset, count: count)
  }

  /// Mapped, not read: a block device always holds its bytes; a regular file is mapped only as far
  /// as it reaches (a mapping past its end would fault), else read like `read`.
  func withBytes<R>(
    at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) -> R
  ) throws(StorageError) -> R {
    try SlotBounds.check(offset: offset, count: count, capacity: slot.capacity)
    if slot.isRegularFile, try slot.file.status().size < offset + UInt64(count) {
      return try read(at: offset, count: count).withUnsafeBytes(body)
    }
    return try storage { () throws(SystemError) in
      try slot.file.descriptor.withMappedBytes(at: offset, count: count, body)
    }
  }
}

/// A read-only slot descriptor, closed when the reader is released.
final class FileSlotReader: OpenSlotHolder {
  let slot: OpenSlotFile

  init(_ slot: OpenSlotFile) { self.slot = slot }

  deinit { try? slot.file.close() }
}

/// A read-write slot descriptor, closed when the writer is released.
final class FileSlotWriter: OpenSlotHolder, SlotWriter {
  let slot: OpenSlotFile

  init(_ slot: OpenSlotFile) { self.slot = slot }

  deinit { try? slot.file.close() }

  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
    try SlotBounds.check(offset: offset, count: bytes.count, capacity: slot.capacity)
    try slot.file.write(bytes, at: offset)
  }

  func sync() throws(StorageError) {
    try slot.file.dataSync()
  }

  /// Refuses an image larger than the slot. A regular file is sized to the capacity (sparse, no zero
  /// fill) so that its length no longer depends on how far earlier transfers got; a block device is
  /// left alone (zero-filling a partition would only wear it).
  func prepare(forImageOf size: UInt64) throws(StorageError) {
    guard size <= slot.capacity else { throw .tooLarge(size: size, capacity: slot.capacity) }
    if slot.isRegularFile { try slot.file.truncate(to: slot.capacity) }
  }
}
