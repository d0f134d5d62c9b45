import OTAChecksum
import OTAStorage
import OTATrust
import OTAWire

/// `otad adopt`: the running slot's bytes written by hand (a factory `dd`, an SD card flashed from
/// an image) recorded in the boot state as the running image: its length, CRC32 and version. From
/// then on Info names it (offsets 84 and 88) and a central with the same bytes as `--base` sends
/// its next release as a delta instead of in full. Only the boot state changes; the slot is read.
public enum RunningImageAdoption {
  public struct Adopted: Equatable, Sendable {
    public var slot: SlotID
    public var length: UInt32
    public var crc32: UInt32
    public var version: Version
    /// The SHA-256 of the bytes recorded, read in the same pass as their CRC32: what `sha256sum`
    /// of the file a central passes as `--base` must give. Empty when nothing was read (`alreadyKnown`).
    public var sha256: [UInt8] = []
    /// The boot state recorded an image for this slot already (an update installed it, or an
    /// earlier adoption): nothing changed.
    public var alreadyKnown: Bool
  }

  public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
    case onTrial(SlotID)
    case provisional
    case lengthOutOfRange(requested: UInt64, slotCapacity: UInt64)
    case storage(String)

    public var description: String {
      switch self {
      case .onTrial(let slot):
        "slot \(slot) runs on trial: confirm it (otad mark-good) or let its trial end before adopting it"
      case .provisional:
        "the boot state was rebuilt without knowing which slot is good: confirm the running slot with "
          + "otad mark-good first"
      case .lengthOutOfRange(let requested, let capacity):
        "a length of \(requested) bytes: it must be 1 to the slot's \(capacity) bytes and at most 4 GiB - 1 "
          + "(Info's fields are 32-bit); give the image's own length with --length"
      case .storage(let reason): reason
      }
    }
  }

  /// Records the running slot's first `length` bytes (the whole slot when nil) as its image, with
  /// `version` (the recorded one when nil). With `force`, a slot whose image the boot state knows
  /// already is recorded again (after a reflash by hand).
  public static func adopt(
    control: BootControl, slots: SlotAccess, length: UInt64?, version: Version?, force: Bool = false
  ) throws(Refusal) -> Adopted {
    let state: BootState
    let running: SlotID
    do {
      state = try control.current()
      running = try control.runningSlot(state)
    } catch {
      throw .storage("the boot state cannot be read: \(error)")
    }
    if state.provisional { throw .provisional }
    if state.runningOnTrial || running != state.confirmed { throw .onTrial(running) }
    let recorded = state[running]
    if !force, recorded.status != .empty, recorded.size > 0 {
      return Adopted(
        slot: running, length: recorded.size, crc32: recorded.crc32, version: recorded.version,
        alreadyKnown: true)
    }
    let reader: any SlotReader
    do {
      reader = try slots.reader(running)
    } catch {
      throw .storage("slot \(running) cannot be opened: \(error)")
    }
    let wanted = length ?? reader.capacity
    guard wanted > 0, wanted <= reader.capacity, wanted <= UInt64(UInt32.max) else {
      throw .lengthOutOfRange(requested: wanted, slotCapacity: reader.capacity)
    }
    var crc = CRC32()
    var sha256 = IncrementalSHA256()
    var offset: UInt64 = 0
    do {
      while offset < wanted {
        let count = Int(min(UInt64(1 << 20), wanted - offset))
        let bytes = try reader.read(at: offset, count: count)
        guard bytes.count == count else {
          throw StorageError.outOfBounds(offset: offset, count: count, capacity: reader.capacity)
        }
        crc.update(bytes)
        sha256.update(bytes)
        offset += UInt64(count)
      }
    } catch {
      throw .storage("slot \(running) cannot be read at offset \(offset): \(error)")
    }
    let adopted = Adopted(
      slot: running, length: UInt32(wanted), crc32: crc.value, version: version ?? recorded.version,
      sha256: sha256.finalize(), alreadyKnown: false)
    do {
      try control.update { state in
        state.slots[running].status = .good
        state.slots[running].size = adopted.length
        state.slots[running].crc32 = adopted.crc32
        state.slots[running].version = adopted.version
      }
    } catch {
      throw .storage("the boot state cannot be saved: \(error)")
    }
    return adopted
  }
}
