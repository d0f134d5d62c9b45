import OTAChecksum
import OTAEngine
import OTAJournal
import OTAWire

/// How the model host carries out one IO: as asked, or failing the way storage can.
public enum IOFate: Sendable, Equatable {
  case succeed
  /// Fails with nothing changed.
  case fail
  /// Fails halfway: a write stores its first half, a prepare has dropped the journal and erased.
  case failTorn
  /// Succeeds, but an image check (VALIDATE's, or ACTIVATE's re-check) says the image is bad.
  case judgeInvalid
}

/// The device's storage as the engine's host sees it: two slots in memory, one journal record, and the
/// boot pointer. Carries out each `ReceiverIO` the way `ReceiverHost` does, with the order chosen so
/// that a failure at any step leaves no journal that claims more than the slot holds.
public struct ReceiverModelHost: Sendable {
  public static let erasedByte: UInt8 = 0xFF

  public var slots: SlotPair<[UInt8]>
  /// The journal record as bytes on disk, or nil.
  public var storedJournal: [UInt8]?
  /// The slot the boot pointer aims at, and whether it boots on trial.
  public var bootSlot: SlotID
  public var bootOnTrial: Bool

  public init(slotCapacity: Int, bootSlot: SlotID, bootOnTrial: Bool) {
    slots = SlotPair(repeating: [UInt8](repeating: Self.erasedByte, count: slotCapacity))
    self.bootSlot = bootSlot
    self.bootOnTrial = bootOnTrial
  }

  public mutating func perform(_ io: ReceiverIO, _ fate: IOFate) -> IOResult {
    if fate == .fail { return .failed("model: storage failure") }
    switch io {
    case .prepare(let journal):
      storedJournal = nil
      erase(journal.slot)
      guard fate != .failTorn else { return .failed("model: torn prepare") }
      storedJournal = journal.encoded
    case .write(let slot, let offset, let bytes):
      let kept = fate == .failTorn ? bytes.prefix(bytes.count / 2) : bytes
      store(kept, in: slot, at: Int(offset))
      if fate == .failTorn { return .failed("model: torn write") }
    case .readRunning(let offset, let length):
      let running = slots[bootSlot]
      let end = min(Int(offset) + Int(length), running.count)
      return .bytes(Array(running[min(Int(offset), end)..<end]))
    case .decodeFrame(let frame, let prefixSize, let maxLength):
      // libzstd, as the host: the running slot's first bytes are the prefix.
      let running = slots[bootSlot]
      let prefix = Array(running.prefix(Int(prefixSize)))
      let decoded = prefix.withUnsafeBytes { bytes in
        Result { () throws(ZstdFrameError) in
          try ZstdFrame.decode(frame, prefix: bytes, maxLength: Int(maxLength))
        }
      }
      switch decoded {
      case .success(let output): return .bytes(output)
      case .failure(let error): return .failed("\(error)")
      }
    case .hashRunning(let blockSize, let first, let count, let imageSize):
      // The model stands in CRC32 for SHA-256 (this target links no hash): one value per block.
      let running = slots[bootSlot]
      let limit = min(Int(imageSize), running.count)
      let hashes = (0..<count).map { index -> UInt64 in
        let start = min((Int(first) + index) * Int(blockSize), limit)
        return UInt64(CRC32.checksum(running[start..<min(start + Int(blockSize), limit)]))
      }
      return .hashes(hashes)
    case .checkWindow(let slot, let offset, let length):
      let end = min(Int(offset) + Int(length), slots[slot].count)
      let start = min(Int(offset), end)
      return .crc32(CRC32.checksum(slots[slot][start..<end]))
    case .commit(let journal), .recordValidated(let journal):
      guard fate != .failTorn else { return .failed("model: journal not replaced") }
      storedJournal = journal.encoded
    case .checkImage(let journal):
      return .image(verdict(on: journal, fate))
    case .activate(let journal, let permanent):
      guard fate != .failTorn else { return .failed("model: boot pointer not changed") }
      let check = verdict(on: journal, fate)
      guard check == .valid else { return .image(check) }
      bootSlot = journal.slot
      bootOnTrial = !permanent
      storedJournal = nil
    case .confirm:
      bootOnTrial = false
    case .discard:
      storedJournal = nil
      if fate == .failTorn { return .failed("model: journal removed, then a failure") }
    }
    return .done
  }

  /// Length and CRC32 of what the slot holds, as `StandardImageCheck` does for a raw image.
  public func verdict(on journal: TransferJournal, _ fate: IOFate) -> ImageCheckResult {
    if fate == .judgeInvalid { return .invalid(.signatureInvalid, reason: "model: judged invalid") }
    let slot = slots[journal.slot]
    guard Int(journal.size) <= slot.count, CRC32.checksum(slot[0..<Int(journal.size)]) == journal.crc32 else {
      return .invalid(.validationFailed, reason: "model: CRC32 mismatch")
    }
    return .valid
  }

  /// The journal a restarting device reads back, decoded defensively as otad does.
  public var journalAfterRestart: TransferJournal? {
    storedJournal.flatMap { try? TransferJournal(bytes: $0) }
  }

  public mutating func erase(_ slot: SlotID) {
    let count = slots[slot].count
    slots[slot] = [UInt8](repeating: Self.erasedByte, count: count)
  }

  public mutating func store(_ bytes: some Collection<UInt8>, in slot: SlotID, at offset: Int) {
    let count = slots[slot].count
    guard offset <= count else { return }
    let end = min(offset + bytes.count, count)
    slots[slot].replaceSubrange(offset..<end, with: bytes.prefix(end - offset))
  }
}
