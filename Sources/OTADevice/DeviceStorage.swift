import OTAEngine
import OTAStorage
import OTAWire

/// Everything the device keeps: the two slots and the directory of small records (journal, boot).
public struct DeviceStorage: Sendable {
  public let slots: SlotAccess
  public let records: any RecordStore

  public init(slots: SlotAccess, records: any RecordStore) {
    self.slots = slots
    self.records = records
  }

  /// Loads a record, moving a damaged one aside (to `NAME.damaged`) rather than trusting it.
  func loadRecord<T>(_ name: String, decode: ([UInt8]) throws(WireError) -> T) throws(StorageError)
    -> Loaded<T>
  {
    let loaded = Loaded.decoding(try records.load(name), decode)
    if loaded.isDamaged { try records.moveAside(name) }
    return loaded
  }
}
