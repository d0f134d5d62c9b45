import OTABoot
import OTAJournal
import OTAStorage
import OTAWire

/// What the device's storage says, read without changing anything: for `otad status`, whether or not
/// the daemon runs (it replaces records atomically, so a read never sees half of one).
public struct DeviceStatus: Equatable, Sendable {
  public var boot: Loaded<BootState>
  public var transfer: Loaded<TransferJournal>
  public var slotCapacities: SlotPair<UInt64>

  public init(boot: Loaded<BootState>, transfer: Loaded<TransferJournal>, slotCapacities: SlotPair<UInt64>) {
    self.boot = boot
    self.transfer = transfer
    self.slotCapacities = slotCapacities
  }

  public static func read(_ storage: DeviceStorage) throws(StorageError) -> DeviceStatus {
    DeviceStatus(
      boot: try BootStateStore(records: storage.records).peek(),
      transfer: try TransferJournalStore.peek(storage.records),
      slotCapacities: try SlotPair.bySlot { slot throws(StorageError) in
        try storage.slots.reader(slot).capacity
      })
  }
}
