import OTAWire

/// Where the device keeps everything: the two slots and the state directory. Parsed once from the
/// daemon's configuration (OTADaemon's `init(parsing:)`), so every path is there; nothing downstream
/// unwraps one again.
public struct DeviceLayout: Equatable, Sendable {
  /// Each slot's path: a regular file or a block device.
  public let slots: SlotPair<String>
  /// The capacity of a slot that is a regular file; nil when not given (block devices use their size).
  public let slotCapacity: UInt64?
  /// Where the journal, the boot state, its lock and the pid file live.
  public let stateDirectory: String

  public init(slots: SlotPair<String>, slotCapacity: UInt64? = nil, stateDirectory: String) {
    self.slots = slots
    self.slotCapacity = slotCapacity
    self.stateDirectory = stateDirectory
  }

  /// The lock that serializes changes to the boot state between processes.
  public var bootLockPath: String { stateDirectory + "/boot.lock" }

  /// Where the file backend's symbolic link lives unless `[boot] link` names another place.
  public var defaultBootLink: String { stateDirectory + "/current" }

  /// The slots as files or block devices.
  public var slotMedium: FileSlotMedium { FileSlotMedium(paths: slots, fileCapacity: slotCapacity ?? 0) }

  /// The device's storage: the slots and the record directory (created if missing).
  public func openStorage() throws(StorageError) -> DeviceStorage {
    DeviceStorage(
      slots: SlotAccess(medium: slotMedium), records: try FileRecordStore(directory: stateDirectory))
  }
}
