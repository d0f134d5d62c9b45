import OTABoot
import OTACBOR
import OTAChecksum
import OTAEngine
import OTAReceiverHost
import OTASMP
import OTAStorage
import OTATrust
import OTAWire

/// Image upload: chunks into the inactive slot through `ReceiverHost.perform`, the OTA protocol's
/// own IO: PREPARE's erase and journal, gathered writes, a commit (sync, then the journal) per
/// window, the image check at the end. The journal's CRC32 is 0 until the last chunk: SMP sends none,
/// so the device computes it from the slot at the end (the image's own SHA-256 and signature are
/// what vouch for it, as on an MCUboot device).
extension SMPDevice {
  mutating func upload(_ upload: SMPUpload, host: inout ReceiverHost) throws(StorageError)
    -> Result<[CBOR.Entry], SMPFailure>
  {
    // Image 0 is the one image; 1 is what smpmgr sends for "slot 1" (`upgrade --slot 1`): both mean the
    // inactive slot, the only one that can be written.
    guard upload.image <= 1 else { return .failure(.image(.invalidSlot)) }
    if upload.offset == 0 {
      switch try begin(upload, host: &host) {
      case .failure(let failure): return .failure(failure)
      case .success(let resumedAt?): return .success([CBOR.Entry(.text("off"), .unsigned(UInt64(resumedAt)))])
      case .success(nil): break
      }
    }
    // The transfer must still be an SMP upload (an OTA PREPARE may have replaced it: its journal carries
    // the image's CRC32, an SMP upload's says 0 until its last chunk). Nothing in progress: the device
    // expects offset 0, as a Zephyr device after a reset, and the client starts over with a first chunk
    // (whose `len` and `sha` resume a journaled upload of the same image).
    guard case .receiving(var journal)? = host.engine.phase.smpReceiving, journal.crc32 == 0 else {
      received = nil
      return .success([CBOR.Entry(.text("off"), .unsigned(0))])
    }
    // Nothing in memory (otad restarted) but a journaled upload that this chunk continues: it goes on
    // from the committed offset, the last byte known to be durable.
    let received: UInt32
    if let inMemory = self.received {
      received = inMemory
    } else if upload.offset >= UInt64(journal.committedOffset), upload.offset <= UInt64(journal.size) {
      received = journal.committedOffset
      self.received = received
    } else {
      return .success([CBOR.Entry(.text("off"), .unsigned(0))])
    }
    guard upload.offset == UInt64(received) else {
      // Not where the device is: tell the client where to go on (it resends from there).
      return .success([CBOR.Entry(.text("off"), .unsigned(UInt64(received)))])
    }
    let end = upload.offset + UInt64(upload.data.count)
    guard end <= UInt64(journal.size) else { return .failure(.image(.imageDataOverrun)) }
    if !upload.data.isEmpty {
      guard
        case .done = try host.perform(.write(slot: journal.slot, offset: received, bytes: upload.data[...]))
      else {
        return .failure(.image(.flashWriteFailed))
      }
    }
    self.received = UInt32(end)
    let window = host.engine.configuration.windowCapacity
    if UInt32(end) == journal.size || UInt32(end) - journal.committedOffset >= window {
      journal.committedOffset = UInt32(end)
      guard case .done = try host.perform(.commit(journal)) else {
        self.received = nil
        try host.reloadTransfer()
        return .failure(.image(.flashWriteFailed))
      }
      try host.reloadTransfer()
    }
    var answer = [CBOR.Entry(.text("off"), .unsigned(end))]
    if UInt32(end) == journal.size {
      switch try finish(journal, host: &host) {
      case .failure(let failure): return .failure(failure)
      case .success(let match?): answer.append(CBOR.Entry(.text("match"), .bool(match)))
      case .success(nil): break
      }
    }
    return .success(answer)
  }

  /// The first chunk, checked in the order Zephyr's `img_mgmt_upload_inspect` checks it: resumes the
  /// upload of the same image (same length and `sha`) at its committed offset, or starts a new one.
  /// Returns the offset to resume at, or nil when a new upload began (its first chunk is then written
  /// by the caller).
  private mutating func begin(_ upload: SMPUpload, host: inout ReceiverHost) throws(StorageError)
    -> Result<UInt32?, SMPFailure>
  {
    guard upload.data.count >= MCUbootHeader.byteCount else { return .failure(.image(.invalidImageHeader)) }
    guard let length = upload.length else { return .failure(.image(.invalidLength)) }
    guard MCUbootHeader.looksLikeMCUboot(upload.data) else {
      return .failure(.image(.invalidImageHeaderMagic))
    }
    if let sha = upload.sha, sha.count > SMPUploadRecord.fullSHALength {
      return .failure(.image(.invalidHash))
    }
    if case .receiving(let journal)? = host.engine.phase.smpReceiving, UInt64(journal.size) == length,
      journal.crc32 == 0,
      let sha = upload.sha,
      SMPUploadRecord.load(host.storage.records) == SMPUploadRecord(size: journal.size, sha: sha),
      journal.committedOffset > 0
    {
      received = journal.committedOffset
      return .success(journal.committedOffset)
    }
    guard !ReceiverHost.unconfirmed(host.boot, host.running) else {
      // A trial still needs its verdict: the other slot may hold the only known-good image.
      return .failure(.image(.noFreeSlot))
    }
    guard length <= host.engine.configuration.slotCapacity, length <= UInt64(UInt32.max) else {
      return .failure(.image(.imageTooLarge))
    }
    guard length > 0 else { return .failure(.image(.invalidLength)) }
    let size = UInt32(length)
    var reader = ByteReader(upload.data)
    guard let header = try? MCUbootHeader(from: &reader) else { return .failure(.image(.invalidImageHeader)) }
    if upload.upgrade, header.version <= host.boot[host.running].version {
      return .failure(.image(.currentVersionIsNewer))
    }
    let journal = TransferJournal(
      slot: host.running.other, state: .receiving, size: size, crc32: 0, version: header.version,
      committedOffset: 0)
    try? host.storage.records.remove(SMPUploadRecord.name)
    guard case .done = try host.perform(.prepare(journal)) else {
      try host.reloadTransfer()
      return .failure(.image(.flashEraseFailed))
    }
    if let sha = upload.sha {
      try host.storage.records.replace(
        SMPUploadRecord.name, with: SMPUploadRecord(size: size, sha: sha).encoded)
    }
    try host.reloadTransfer()
    received = 0
    return .success(nil)
  }

  /// The whole image is in the slot and committed: its CRC32 from the slot into the journal, then the
  /// image check VALIDATE makes; valid, the journal says validated (state write "test" activates it).
  /// Returns whether the uploaded bytes match the client's full `sha` (Zephyr's `match`), nil when it
  /// sent none or a shorter one.
  private mutating func finish(_ committed: TransferJournal, host: inout ReceiverHost) throws(StorageError)
    -> Result<Bool?, SMPFailure>
  {
    received = nil
    var journal = committed
    guard
      case .crc32(let crc) = try host.perform(
        .checkWindow(slot: journal.slot, offset: 0, length: journal.size))
    else { return .failure(.image(.flashWriteFailed)) }
    journal.crc32 = crc
    guard case .done = try host.perform(.commit(journal)) else { return .failure(.image(.flashWriteFailed)) }
    switch try host.perform(.checkImage(journal)) {
    case .image(.valid):
      journal.state = .validated
      guard case .done = try host.perform(.recordValidated(journal)) else {
        return .failure(.image(.flashWriteFailed))
      }
      try host.reloadTransfer()
      // Only an image the device keeps is worth reading a third time (after the CRC32 and the check).
      return .success(try Self.matchesFullSHA(journal, host: host))
    case .image(.invalid(let status, _)):
      _ = try host.perform(.discard(answer: Response(requestOpcode: 0, status: status, payload: .none)))
      try host.reloadTransfer()
      return .failure(Self.failure(for: status))
    default:
      return .failure(.image(.flashWriteFailed))
    }
  }

  /// The SHA-256 of the slot's first `size` bytes against the `sha` the first chunk named, when it
  /// named a whole one.
  private static func matchesFullSHA(_ journal: TransferJournal, host: ReceiverHost) throws(StorageError)
    -> Bool?
  {
    guard let record = SMPUploadRecord.load(host.storage.records), record.size == journal.size,
      record.sha.count == SMPUploadRecord.fullSHALength
    else { return nil }
    let source = SlotImageSource(try host.storage.slots.reader(journal.slot))
    return try SourceDigest.sha256(of: source, length: UInt64(journal.size)) == record.sha
  }

  /// The image group's code for the device's own verdict on an image.
  static func failure(for status: StatusCode) -> SMPFailure {
    switch status {
    case .signatureInvalid: .image(.invalidTLV)
    case .downgradeRefused: .image(.currentVersionIsNewer)
    case .tooLarge: .image(.imageTooLarge)
    case .storageError: .image(.flashWriteFailed)
    default: .image(.invalidImageHeader)
    }
  }
}

extension ReceiverEngine.Phase {
  /// The transfer as an SMP upload sees it: receiving (resumable), or nothing.
  var smpReceiving: ReceiverEngine.Phase? {
    if case .receiving = self { self } else { nil }
  }
}
