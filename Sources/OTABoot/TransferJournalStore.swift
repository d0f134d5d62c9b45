import OTAJournal
import OTAStorage
import OTAWire

/// Where the transfer journal lives. Since issue 13 it is `transfer.journal.inplace`, an
/// `AlternatingRecord` updated in place after each committed window (one pwrite, one fdatasync).
/// The previous otad replaced `transfer.journal` whole per window; a device upgraded in the middle
/// of a transfer still has that file: it is read at start and resumed from, and removed right after
/// the first write of the new file (so a cut in between leaves both, and the new one wins).
public struct TransferJournalStore: Sendable {
  public static let fileName = "transfer.journal.inplace"
  /// The previous otad's journal: the same 32-byte `TransferJournal`, replaced atomically per window.
  public static let legacyFileName = "transfer.journal"

  public let records: any RecordStore
  private var record: AlternatingRecord
  /// True while `legacyFileName` may still exist: the next write or removal deletes it.
  private var legacyPresent = false

  public init(records: any RecordStore) {
    self.records = records
    record = AlternatingRecord(name: Self.fileName, store: records)
  }

  /// Reads the journal: the in-place file, else the legacy one. A file that fails its checks is
  /// moved aside (`NAME.damaged`) and never trusted; `movedAside` names it, for the log.
  public mutating func load() throws(StorageError) -> (journal: Loaded<TransferJournal>, movedAside: [String])
  {
    var movedAside: [String] = []
    let current = Self.decode(try record.load())
    if current.isDamaged {
      try record.moveAside()
      movedAside.append(Self.fileName)
    }
    let legacy = Loaded.decoding(try records.load(Self.legacyFileName), TransferJournal.init(bytes:))
    legacyPresent = legacy != .missing
    if legacy.isDamaged {
      try records.moveAside(Self.legacyFileName)
      legacyPresent = false
      movedAside.append(Self.legacyFileName)
    }
    return (Self.prefer(current, over: legacy), movedAside)
  }

  /// Writes `journal` durably: in place when the file exists, else by creating it. Then the legacy
  /// file, if any, goes.
  public mutating func write(_ journal: TransferJournal) throws(StorageError) {
    try record.write(journal.encoded)
    if legacyPresent {
      try records.remove(Self.legacyFileName)
      legacyPresent = false
    }
  }

  /// Removes the journal: the legacy file first, so that a cut in between never revives it.
  public mutating func remove() throws(StorageError) {
    if legacyPresent {
      try records.remove(Self.legacyFileName)
      legacyPresent = false
    }
    try record.remove()
  }

  /// Reads without moving anything aside: for `otad status` and the boot state's evidence.
  public static func peek(_ records: any RecordStore) throws(StorageError) -> Loaded<TransferJournal> {
    let current = decode(
      AlternatingRecord.newest(in: try records.load(fileName), placeSize: AlternatingRecord.defaultPlaceSize)
        .map { $0.copy.payload })
    let legacy = Loaded.decoding(try records.load(legacyFileName), TransferJournal.init(bytes:))
    return prefer(current, over: legacy)
  }

  /// The in-place journal when present (it is the newer), else the legacy one; damaged before missing.
  private static func prefer(_ current: Loaded<TransferJournal>, over legacy: Loaded<TransferJournal>)
    -> Loaded<TransferJournal>
  {
    switch (current, legacy) {
    case (.present, _), (.damaged, .missing): current
    default: legacy
    }
  }

  private static func decode(_ payload: Loaded<[UInt8]>) -> Loaded<TransferJournal> {
    switch payload {
    case .missing: .missing
    case .damaged(let reason): .damaged(reason: reason)
    case .present(let bytes): Loaded.decoding(bytes, TransferJournal.init(bytes:))
    }
  }
}
