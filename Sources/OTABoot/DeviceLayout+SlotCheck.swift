import OTAStorage
import OTAWire

extension DeviceLayout {
  /// Refuses slots that cannot serve (a directory, a file larger than the capacity, a missing file
  /// where the confirmed firmware should be), before anything is created or changed. `stateExists`:
  /// whether the state directory is there (without it the device was never started).
  public func checkSlots(boot: BootConfiguration, stateExists: Bool) throws(StorageError) {
    try slotMedium.check(mustExist: [confirmedSlot(boot: boot, stateExists: stateExists)])
  }

  /// The slot holding the confirmed firmware, as the boot state says without changing anything; on
  /// a device without one, the bootloader's primary slot, or the one it started, else A.
  public func confirmedSlot(boot: BootConfiguration, stateExists: Bool) -> SlotID {
    guard stateExists, let records = try? FileRecordStore(directory: stateDirectory) else { return .a }
    if let state = try? BootStateStore(records: records).peek().value { return state.confirmed }
    let pointer = try? boot.makeBackend(for: self).pointer()
    return pointer?.primary ?? pointer?.booted ?? .a
  }
}
