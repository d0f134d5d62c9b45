import OTABoot
import OTACBOR
import OTAChecksum
import OTAJournal
import OTAReceiverHost
import OTASMP
import OTAStorage
import OTATrust
import OTAWire

/// Image upload: an adapter over the host's update transaction. The first chunk begins an SMP
/// transfer (PREPARE's erase and journal); every later chunk carries its identity into the host's
/// gathered writes and a commit (sync, then the journal) per window; the last one validates and
/// seals the slot. The journal's CRC32 is 0 until the last chunk: SMP sends none,
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
    // The upload must still be the transfer under way: another protocol (or a new first chunk) may
    // have begun another since, which made this one's identity stale. Nothing in progress: the
    // device expects offset 0, as a Zephyr device after a reset, and the client starts over with a
    // first chunk (whose `len` and `sha` resume a journaled upload of the same image).
    guard let (id, journal, received) = carryingOn(upload, host: &host) else {
      self.upload = nil
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
        case .success = try host.perform(
          .write(slot: journal.slot, offset: received, bytes: upload.data[...]), for: id)
      else {
        return .failure(.image(.flashWriteFailed))
      }
    }
    let now = UInt32(end)
    self.upload = Upload(id: id, received: now)
    let window = host.engine.configuration.windowCapacity
    if now == journal.size || now - min(now, journal.committedOffset) >= window {
      var committed = journal
      committed.committedOffset = now
      guard case .success = try host.perform(.commit(committed), for: id) else {
        self.upload = nil
        return .failure(.image(.flashWriteFailed))
      }
    }
    var answer = [CBOR.Entry(.text("off"), .unsigned(end))]
    if now == journal.size {
      switch try finish(id, host: &host) {
      case .failure(let failure): return .failure(failure)
      case .success(let match?): answer.append(CBOR.Entry(.text("match"), .bool(match)))
      case .success(nil): break
      }
    }
    return .success(answer)
  }

  /// The upload this chunk carries on: the one under way in this process while its identity is
  /// still the current transfer's; else (otad restarted) SMP's journaled transfer, when the chunk
  /// lies between its committed offset (the last byte known to be durable) and its end.
  private mutating func carryingOn(_ upload: SMPUpload, host: inout ReceiverHost)
    -> (TransferID, TransferJournal, UInt32)?
  {
    if let current = self.upload {
      guard let journal = host.transfer(current.id), journal.state == .receiving else { return nil }
      return (current.id, journal, current.received)
    }
    guard let journal = host.transaction.current(of: .smp)?.journal, journal.state == .receiving,
      upload.offset >= UInt64(journal.committedOffset), upload.offset <= UInt64(journal.size),
      let resumed = host.resume(.smp)
    else { return nil }
    self.upload = Upload(id: resumed.id, received: journal.committedOffset)
    return (resumed.id, journal, journal.committedOffset)
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
    if let journal = host.transaction.current(of: .smp)?.journal, journal.state == .receiving,
      UInt64(journal.size) == length, journal.committedOffset > 0, let sha = upload.sha,
      SMPUploadRecord.load(host.storage.records) == SMPUploadRecord(size: journal.size, sha: sha),
      let resumed = host.resume(.smp)
    {
      self.upload = Upload(id: resumed.id, received: journal.committedOffset)
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
    // An encrypted image this device could never open: refused before a byte of it is written.
    if header.isEncrypted, host.imageCheck.policy.decryptionKey == nil {
      return .failure(.image(.invalidImageHeader))
    }
    try? host.storage.records.remove(SMPUploadRecord.name)
    self.upload = nil
    switch try host.begin(.smp, size: size, crc32: 0, version: header.version) {
    case .success(let transfer):
      self.upload = Upload(id: transfer.id, received: 0)
    case .failure(.refused(.busy)):
      return .failure(.generic(.busy))
    case .failure(.refused(.runningUnconfirmed)), .failure(.refused(.slotInUse)):
      return .failure(.image(.noFreeSlot))
    case .failure:
      return .failure(.image(.flashEraseFailed))
    }
    if let sha = upload.sha {
      try host.storage.records.replace(
        SMPUploadRecord.name, with: SMPUploadRecord(size: size, sha: sha).encoded)
    }
    return .success(nil)
  }

  /// The whole image is in the slot and committed: its CRC32 from the slot into the journal, then the
  /// image check VALIDATE makes; valid, the journal says validated and the slot is sealed (state
  /// write "test" activates it). Returns whether the uploaded bytes match the client's full `sha`
  /// (Zephyr's `match`), nil when it sent none or a shorter one.
  private mutating func finish(_ id: TransferID, host: inout ReceiverHost) throws(StorageError)
    -> Result<Bool?, SMPFailure>
  {
    upload = nil
    // Of the bytes as uploaded, as Zephyr hashes them: before VALIDATE, which decrypts an encrypted
    // image in place (the slot then no longer holds what the client sent).
    guard let uploaded = host.transfer(id) else { return .failure(.image(.flashWriteFailed)) }
    let matches = try Self.matchesFullSHA(uploaded, host: host)
    switch try host.validate(id) {
    case .success:
      return .success(matches)
    case .failure(.imageInvalid(let status, _)):
      return .failure(Self.failure(for: status))
    case .failure:
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
