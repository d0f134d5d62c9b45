import OTAWire

/// Read access to one slot's bytes.
public protocol SlotReader: Sendable {
  /// The number of bytes the slot can hold (a file's configured capacity or a block device's size).
  var capacity: UInt64 { get }
  /// Exactly `count` bytes from `offset`; throws `.outOfBounds` past the capacity.
  func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8]
  /// Exactly `count` bytes from `offset`, for the time of `body` only: a file slot maps them (a
  /// zstd frame's decoder reaches anywhere in a running image of up to gigabytes), others read them.
  func withBytes<R>(at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) -> R) throws(StorageError)
    -> R
}

extension SlotReader {
  public func withBytes<R>(
    at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) -> R
  ) throws(StorageError) -> R {
    try read(at: offset, count: count).withUnsafeBytes(body)
  }
}

/// Write access to one slot. Obtained only through `SlotAccess.openForWriting(_:running:)`, the single
/// place that refuses the running slot.
public protocol SlotWriter: SlotReader {
  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError)
  /// Makes every write so far durable (fdatasync).
  func sync() throws(StorageError)
  /// Readies the slot for an image of `size` bytes (a regular file is sized to its capacity here).
  func prepare(forImageOf size: UInt64) throws(StorageError)
}

/// Where a slot's bytes live: regular files and block devices (`FileSlotMedium`); the tests' media
/// live in OTAStorageTesting. Only `SlotAccess` calls `openForWriting`.
public protocol SlotMedium: Sendable {
  func openForReading(_ slot: SlotID) throws(StorageError) -> any SlotReader
  func openForWriting(_ slot: SlotID) throws(StorageError) -> any SlotWriter
}

/// A directory of small records: the boot state, the transfer journal.
/// `replace` writes a temporary file, syncs it, renames it over the old one and syncs the directory,
/// so that after a power cut a record is either wholly old or wholly new. `overwrite` changes bytes
/// of an existing record in place (pwrite, fdatasync): cheap, but a power cut may leave the bytes
/// old, new or torn at sector bounds, so only formats built for it use it (`AlternatingRecord`).
public protocol RecordStore: Sendable {
  func load(_ name: String) throws(StorageError) -> [UInt8]?
  func replace(_ name: String, with bytes: [UInt8]) throws(StorageError)
  /// Writes `bytes` at `offset` into the existing record `name` and makes them durable (fdatasync):
  /// no temporary file, no rename, no directory sync. A missing record fails with ENOENT.
  func overwrite(_ name: String, at offset: Int, with bytes: [UInt8]) throws(StorageError)
  func remove(_ name: String) throws(StorageError)
  /// Renames a damaged record to `name.damaged` (replacing an older one) so it is kept but not trusted.
  func moveAside(_ name: String) throws(StorageError)
}

/// The two slots and the one rule that protects the running one.
public struct SlotAccess: Sendable {
  public let medium: any SlotMedium

  public init(medium: any SlotMedium) { self.medium = medium }

  public func reader(_ slot: SlotID) throws(StorageError) -> any SlotReader {
    try medium.openForReading(slot)
  }

  /// The only way to write a slot in this code base, and the one place that refuses the running slot.
  public func openForWriting(_ slot: SlotID, running: SlotID) throws(StorageError) -> any SlotWriter {
    guard slot != running else { throw .runningSlotIsReadOnly("slot \(slot) is running") }
    return try medium.openForWriting(slot)
  }
}
