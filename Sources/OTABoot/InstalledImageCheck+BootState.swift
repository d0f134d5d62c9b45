import OTAStorage
import OTATrust
import OTAWire

extension InstalledImageCheck {
  /// Checks `slot` against what the boot state recorded for it (`BootState.Slot`'s length and CRC32).
  public static func check(
    _ slot: SlotID, recorded: BootState.Slot, reader: any SlotReader, policy: ImagePolicy
  ) throws(StorageError) -> InstalledImageCheck {
    try check(
      slot, recorded: RecordedImage(size: recorded.size, crc32: recorded.crc32),
      reader: SlotImageSource(reader),
      policy: policy)
  }
}
