import OTABoot
import OTAStorage
import OTATrust
import OTAWire

/// A slot's image hash (MCUboot's SHA-256 TLV, verified against its bytes) as SMP's image state
/// read reports it, computed once per state of the slot: the slot's bytes change only through
/// this host (each opening for writing bumps the slot's generation), and its boot-state entry is
/// part of the key. A flood of state reads hashes nothing after the first.
struct SlotHashCache: Sendable {
  struct Entry: Sendable {
    var generation: UInt64
    var recorded: BootState.Slot
    var hash: [UInt8]?
  }

  var entries = SlotPair<Entry?>(repeating: nil)
  var generations = SlotPair<UInt64>(repeating: 0)
}

extension ReceiverHost {
  /// The SHA-256 TLV of the MCUboot image in `slot`, when its bytes are a well-formed image whose
  /// hash holds; nil otherwise. Costly once per state of the slot (`imageHashBytesRead` counts it).
  public mutating func imageHash(_ slot: SlotID) -> [UInt8]? {
    let generation = slotHashes.generations[slot]
    if let entry = slotHashes.entries[slot], entry.generation == generation, entry.recorded == boot[slot] {
      return entry.hash
    }
    var hash: [UInt8]?
    if let reader = try? storage.slots.reader(slot),
      case .verified(let report)? = try? ImageVerifier.survey(
        reader: SlotImageSource(reader), policy: .integrityOnly)
    {
      hash = report.sha256
      imageHashBytesRead += report.size
    }
    slotHashes.entries[slot] = SlotHashCache.Entry(generation: generation, recorded: boot[slot], hash: hash)
    return hash
  }

  /// The slot's bytes may change from here on: its cached hash no longer holds.
  mutating func slotMayChange(_ slot: SlotID) {
    slotHashes.generations[slot] &+= 1
  }
}
