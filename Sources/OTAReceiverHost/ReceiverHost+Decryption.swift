import OTABoot
import OTAJournal
import OTAStorage
import OTATrust
import OTAWire

/// An encrypted image's payload decrypted in place, after its check and before it is recorded as
/// validated, block by block, each block's ciphertext kept in `DecryptionRecord` before its
/// plaintext is written: a power cut at any instant resumes where it stopped.
///
/// Why in place after the transfer, not chunk by chunk as they arrive: the AES key is wrapped in
/// the TLVs, after the payload, so neither our protocol's chunks nor an SMP upload can be
/// decrypted when they arrive; and while the slot holds exactly what was sent, resume, selective
/// repeat, window CRCs and every other protocol's checks are the same as for any image. MCUboot
/// also keeps the secondary slot encrypted and decrypts while it copies.
extension ReceiverHost {
  /// The slot offset below which `journal`'s payload is plaintext: 0 without a record of this
  /// transfer (a stale record is removed). A block the record says was under way is written again
  /// from its saved ciphertext first, whatever half of it a power cut left.
  mutating func resumeDecryption(_ journal: TransferJournal) throws(StorageError) -> UInt64 {
    guard decryptionRecorded, let bytes = try storage.records.load(DecryptionRecord.fileName) else {
      return 0
    }
    guard let record = DecryptionRecord(bytes: bytes), record.describes(journal) else {
      try forgetDecryption()
      return 0
    }
    guard !record.ciphertext.isEmpty else { return record.blockStart }
    let reader = try storage.slots.reader(journal.slot)
    // No cipher (the device's key was changed or removed since): the block stays as it is and the
    // check, seeing neither the sender's CRC32 nor the plaintext's hash, refuses the image.
    guard let cipher = try imageCheck.decryption(reader, journal) else { return record.blockStart }
    try writeDurably(
      cipher.crypt(record.ciphertext, atSlotOffset: record.blockStart), at: record.blockStart,
      of: journal.slot)
    return record.plaintextBelow
  }

  /// Decrypts what is left of `journal`'s payload from slot offset `start`; nothing for an image
  /// that is not encrypted. Ends with a record that says all of it is plaintext. Returns the slot
  /// offset below which the payload is now plaintext (`start` for an image that is not encrypted).
  @discardableResult
  mutating func decryptInPlace(_ journal: TransferJournal, from start: UInt64) throws(StorageError) -> UInt64
  {
    guard let cipher = try imageCheck.decryption(try storage.slots.reader(journal.slot), journal) else {
      return start
    }
    decryptionRecorded = true
    var offset = max(start, cipher.payload.lowerBound)
    while offset < cipher.payload.upperBound {
      let count = Int(min(UInt64(max(16, decryptionBlockSize)), cipher.payload.upperBound - offset))
      let ciphertext = try slotWriter(journal.slot).read(at: offset, count: count)
      try storage.records.replace(
        DecryptionRecord.fileName, with: record(journal, blockStart: offset, ciphertext: ciphertext).encoded)
      try writeDurably(cipher.crypt(ciphertext, atSlotOffset: offset), at: offset, of: journal.slot)
      offset += UInt64(count)
    }
    try storage.records.replace(
      DecryptionRecord.fileName,
      with: record(journal, blockStart: cipher.payload.upperBound, ciphertext: []).encoded)
    return cipher.payload.upperBound
  }

  /// For a validated transfer: the end of an encrypted image's payload (all of it is plaintext), 0
  /// for any other image. Reads only the header and TLVs, writes nothing, needs no record.
  func decryptedPayloadEnd(_ journal: TransferJournal) throws(StorageError) -> UInt64 {
    try imageCheck.decryption(try storage.slots.reader(journal.slot), journal)?.payload.upperBound ?? 0
  }

  /// The record goes with the transfer it describes.
  mutating func forgetDecryption() throws(StorageError) {
    guard decryptionRecorded else { return }
    try storage.records.remove(DecryptionRecord.fileName)
    decryptionRecorded = false
  }

  /// The CRC32 of `journal`'s bytes as sent, when a decryption has begun to change them in the slot.
  func sentCRC32(of journal: TransferJournal) throws(StorageError) -> UInt32? {
    guard decryptionRecorded, let bytes = try storage.records.load(DecryptionRecord.fileName),
      let record = DecryptionRecord(bytes: bytes), record.slot == journal.slot, record.size == journal.size
    else { return nil }
    return record.crc32
  }

  private func record(_ journal: TransferJournal, blockStart: UInt64, ciphertext: [UInt8]) -> DecryptionRecord
  {
    DecryptionRecord(
      slot: journal.slot, size: journal.size, crc32: journal.crc32, blockStart: blockStart,
      ciphertext: ciphertext)
  }

  private mutating func writeDurably(_ bytes: [UInt8], at offset: UInt64, of slot: SlotID)
    throws(StorageError)
  {
    let writer = try slotWriter(slot)
    // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
    try bytes.withUnsafeBytes { buffer in
      Result { () throws(StorageError) in try writer.write(buffer, at: offset) }
    }.get()
    try writer.sync()
  }
}
