import OTABoot
import OTAEngine
import OTAStorage
import OTAWire

/// What the device's storage says, read without changing anything: for `otad status`, whether or not
/// the daemon runs (it replaces records atomically, so a read never sees half of one).
public struct DeviceStatus: Equatable, Sendable {
  public enum Record<T: Equatable & Sendable>: Equatable, Sendable {
    case missing
    case damaged
    case present(T)
  }

  public var boot: Record<BootState>
  public var transfer: Record<TransferJournal>
  public var slotCapacities: [UInt64]

  public static func read(_ storage: DeviceStorage) throws(StorageError) -> DeviceStatus {
    DeviceStatus(
      boot: try bootState(storage),
      transfer: try load(storage, TransferJournal.recordName) { bytes throws(WireError) in
        try TransferJournal(bytes: bytes)
      },
      slotCapacities: try SlotID.allCases.map { slot throws(StorageError) in
        try storage.slots.reader(slot).capacity
      })
  }

  private static func bootState(_ storage: DeviceStorage) throws(StorageError) -> Record<BootState> {
    switch try BootStateStore(records: storage.records).peek() {
    case .missing: .missing
    case .damaged: .damaged
    case .present(let state): .present(state)
    }
  }

  private static func load<T>(
    _ storage: DeviceStorage, _ name: String, _ decode: ([UInt8]) throws(WireError) -> T
  ) throws(StorageError) -> Record<T> {
    guard let bytes = try storage.records.load(name) else { return .missing }
    do {
      return .present(try decode(bytes))
    } catch {
      return .damaged
    }
  }
}
