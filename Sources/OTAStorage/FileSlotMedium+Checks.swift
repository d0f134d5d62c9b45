import OTAWire

extension FileSlotMedium {
  /// Checks the configured slots before the daemon changes anything: each is a block device or a
  /// regular file no larger than the capacity, or is missing with its directory there to create it
  /// in. A slot in `mustExist` (the one holding the firmware the device runs) may not be missing:
  /// an empty file created in its place would be reported as running firmware.
  public func check(mustExist: Set<SlotID>) throws(StorageError) {
    for slot in SlotID.allCases { try check(slot, mustExist: mustExist.contains(slot)) }
  }

  private func check(_ slot: SlotID, mustExist: Bool) throws(StorageError) {
    let path = path(of: slot)
    guard let status = try POSIX.status(ofPath: path) else {
      if mustExist {
        throw .unusableSlot(
          path: path,
          reason: "does not exist, but slot \(slot) holds the firmware the device runs: copy that image "
            + "there (or create the file empty, for a device with nothing to run yet), or fix the path")
      }
      let parent = POSIX.parentDirectory(of: path)
      guard try POSIX.status(ofPath: parent)?.kind == .directory else {
        throw .unusableSlot(
          path: path, reason: "does not exist and its directory \(parent) does not exist either: create it")
      }
      return
    }
    if let reason = Self.unusableReason(status.kind) { throw .unusableSlot(path: path, reason: reason) }
    guard status.kind == .regular else { return }
    guard fileCapacity > 0 else {
      throw .unusableSlot(
        path: path,
        reason: "is a regular file, and a file slot needs a capacity (--capacity or [slots] capacity)")
    }
    guard status.size <= fileCapacity else {
      throw .unusableSlot(
        path: path,
        reason: "is \(status.size) bytes, more than the slot capacity of \(fileCapacity): raise the "
          + "capacity (--capacity or [slots] capacity) or check that the path names a slot")
    }
  }
}

extension StorageError {
  /// The path of an unusable slot, for saying which slot it is.
  public var slotPath: String? {
    if case .unusableSlot(let path, _) = self { path } else { nil }
  }
}
