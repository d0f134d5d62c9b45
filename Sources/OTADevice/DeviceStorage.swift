import OTAEngine
import OTAStorage
import OTAWire

/// Everything the device keeps: the two slots and the directory of small records (journal, boot).
public struct DeviceStorage: Sendable {
  public let slots: SlotPair
  public let records: any RecordStore

  public init(slots: SlotPair, records: any RecordStore) {
    self.slots = slots
    self.records = records
  }

  /// Loads a record, moving a damaged one aside rather than trusting it.
  func loadRecord<T>(_ name: String, decode: ([UInt8]) throws(WireError) -> T) throws(StorageError) -> T? {
    guard let bytes = try records.load(name) else { return nil }
    do {
      return try decode(bytes)
    } catch {
      try records.moveAside(name)
      return nil
    }
  }
}
