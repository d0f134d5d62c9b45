import OTABoot
import OTAStorage
import OTATrust
import OTAWire

/// What the health check learns about the trial, as environment variables:
/// `OTAD_SLOT` (a or b), `OTAD_SLOT_PATH`, `OTAD_VERSION`, `OTAD_IMAGE_SIZE`, and where the firmware
/// itself sits in the slot, `OTAD_PAYLOAD_OFFSET` and `OTAD_PAYLOAD_SIZE` (past the header of an
/// MCUboot image; the whole image otherwise), and `OTAD_IMAGE_CHECK`, whether the slot still holds
/// the image installed there (`intact`, `rotten: why`, `unchecked: why`; `InstalledImageCheck`).
/// The check can then run or inspect the new firmware.
public enum HealthEnvironment {
  public static func make(
    boot: BootState, slot: SlotID, slotPath: String, reader: (any SlotReader)?,
    imageCheck: InstalledImageCheck? = nil
  ) -> [String: String] {
    let image = boot[slot]
    var size = UInt64(image.size)
    if size == 0, let reader { size = reader.capacity }
    var payloadOffset: UInt64 = 0
    var payloadSize = size
    if let reader, size >= UInt64(MCUbootHeader.byteCount),
      let bytes = try? reader.read(at: 0, count: MCUbootHeader.byteCount),
      MCUbootHeader.looksLikeMCUboot(bytes)
    {
      var byteReader = ByteReader(bytes)
      if let header = try? MCUbootHeader(from: &byteReader), header.tlvOffset <= size {
        payloadOffset = UInt64(header.headerSize)
        payloadSize = UInt64(header.imageSize)
      }
    }
    var environment = [
      "OTAD_SLOT": "\(slot)".lowercased(),
      "OTAD_SLOT_PATH": slotPath,
      "OTAD_VERSION": "\(image.version)",
      "OTAD_IMAGE_SIZE": "\(size)",
      "OTAD_PAYLOAD_OFFSET": "\(payloadOffset)",
      "OTAD_PAYLOAD_SIZE": "\(payloadSize)",
    ]
    if let imageCheck { environment["OTAD_IMAGE_CHECK"] = imageCheck.description }
    return environment
  }
}
