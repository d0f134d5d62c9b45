/// Everything the device keeps: the two slots and the directory of small records (journal, boot).
public struct DeviceStorage: Sendable {
  public let slots: SlotAccess
  public let records: any RecordStore

  public init(slots: SlotAccess, records: any RecordStore) {
    self.slots = slots
    self.records = records
  }
}
