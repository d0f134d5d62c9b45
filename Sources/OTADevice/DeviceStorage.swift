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

  /// A record as loaded: its value, or why there is none.
  enum Loaded<T> {
    case missing
    /// It failed its checks (`why`) and was moved aside to `NAME.damaged`.
    case movedAside(why: String)
    case present(T)

    var value: T? { if case .present(let value) = self { value } else { nil } }
  }

  /// Loads a record, moving a damaged one aside rather than trusting it.
  func loadRecord<T>(_ name: String, decode: ([UInt8]) throws(WireError) -> T) throws(StorageError) -> Loaded<
    T
  > {
    guard let bytes = try records.load(name) else { return .missing }
    do {
      return .present(try decode(bytes))
    } catch {
      try records.moveAside(name)
      return .movedAside(why: error.reason)
    }
  }
}
