import OTAEngine
import OTAJournal
import OTAWire

extension ReceiverInvariantChecker {
  /// The engine asked for `io`: the rules on what it may touch.
  public mutating func engineAsked(_ io: ReceiverIO) {
    if let inFlight { fail("one IO at a time", "\(io) asked while \(inFlight) is in flight") }
    inFlight = io
    switch io {
    case .prepare(let journal):
      lastStatus = .idle
      checkPrepare(journal)
    case .write(let slot, let offset, let bytes):
      checkWrite(slot: slot, offset: offset, count: bytes.count)
    case .readRunning(let offset, let length):
      // The host reads the running slot only (ReceiverIO says so); the engine bounds the range.
      if length == 0 || length > configuration.maxOperationLength
        || UInt64(offset) + UInt64(length) > configuration.slotCapacity
      {
        fail("an operation reads at most its limit, inside the running image", "\(io)")
      }
      if transfer?.state != .receiving { fail("operations only while receiving", "\(io)") }
    case .decodeFrame(let frame, let prefixSize, let maxLength):
      // A frame decodes against the running image only, into at most its limit, while receiving.
      if frame.isEmpty || maxLength == 0 || maxLength > configuration.maxFrameLength || prefixSize == 0
        || UInt64(prefixSize) > configuration.slotCapacity
      {
        fail("a frame decodes into at most its limit against the running image", "\(io)")
      }
      if transfer?.state != .receiving { fail("frames only while receiving", "\(io)") }
    case .hashRunning(let blockSize, let first, let count, let imageSize):
      // BLOCK HASHES reads the running slot only, at most 4 MiB per answer, inside the image.
      let start = UInt64(first) * UInt64(blockSize)
      let end = min(start + UInt64(count) * UInt64(blockSize), UInt64(imageSize))
      if count < 1 || start >= UInt64(imageSize) || end - start > BlockHashRequest.maxBytesPerAnswer {
        fail("a BLOCK HASHES answer reads at most 4 MiB inside the running image", "\(io)")
      }
    case .checkWindow(let slot, let offset, let length):
      guard let transfer, slot == transfer.slot, offset == transfer.committedOffset, length > 0,
        length <= configuration.windowCapacity, UInt64(offset) + UInt64(length) <= UInt64(transfer.size)
      else {
        return fail("window checks follow the committed offset", "\(io) with transfer \(describe(transfer))")
      }
    case .commit(let journal):
      checkCommit(journal)
    case .checkImage(let journal):
      guard let transfer, sameImage(journal, transfer), journal.committedOffset == journal.size else {
        return fail("image checked when complete", "\(journal) with transfer \(describe(transfer))")
      }
    case .recordValidated(let journal):
      if journal.state != .validated || !passedCheck(journal) {
        fail("validated only after a valid check", "\(journal)")
      }
    case .activate(let journal, _):
      if journal.slot == runningSlot || journal.state != .validated || !passedCheck(journal) {
        fail(
          "boot pointer only at a validated image",
          "activate \(journal); last valid check: \(validImage.map { "\($0)" } ?? "none")")
      }
    case .confirm, .discard:
      break
    }
  }

  /// The host finished `io` with `result`.
  /// - Parameter slotUntouched: a failed prepare or write changed nothing (else it may have changed
  ///   some bytes, and voids the slot's last image check like a successful one).
  public mutating func hostCompleted(_ io: ReceiverIO, _ result: IOResult, slotUntouched: Bool = false) {
    if inFlight != io {
      fail("completion of the IO in flight", "\(io) completed, in flight: \(String(describing: inFlight))")
    }
    inFlight = nil
    let succeeded = result == .done
    switch io {
    case .prepare(let journal):
      transfer = succeeded ? journal : nil
      if !slotUntouched { slotChanged(journal.slot) }
    case .write(let slot, _, _):
      if !slotUntouched { slotChanged(slot) }
    case .commit(let journal), .recordValidated(let journal):
      if succeeded { transfer = journal }
    case .checkImage(let journal):
      if result == .image(.valid) {
        validImage = ValidImage(slot: journal.slot, size: journal.size, crc32: journal.crc32)
      }
    case .activate(let journal, _):
      if succeeded {
        activatedSlot = journal.slot
        transfer = nil
      } else if case .image = result {
        transfer = nil
      }
    case .discard:
      transfer = nil
    case .confirm:
      if succeeded { runningOnTrial = false }
    case .checkWindow, .readRunning, .hashRunning, .decodeFrame:
      break
    }
  }

  /// Bytes of `slot` changed (also after a power cut that finished a prepare or write).
  public mutating func slotChanged(_ slot: SlotID) {
    if validImage?.slot == slot { validImage = nil }
  }

  private mutating func checkPrepare(_ journal: TransferJournal) {
    if journal.slot == runningSlot { fail("running slot never prepared", "\(journal)") }
    if runningOnTrial { fail("fallback slot kept during a trial", "prepare \(journal) while on trial") }
    if journal.size == 0 || UInt64(journal.size) > configuration.slotCapacity || journal.committedOffset != 0
      || journal.state != .receiving
    {
      fail("prepared journal is a fresh transfer that fits", "\(journal)")
    }
  }

  private mutating func checkWrite(slot: SlotID, offset: UInt32, count: Int) {
    if slot == runningSlot { fail("running slot never written", "\(count) bytes at \(offset) into \(slot)") }
    if runningOnTrial { fail("fallback slot kept during a trial", "write into \(slot) while on trial") }
    guard let transfer, slot == transfer.slot, transfer.state == .receiving else {
      return fail(
        "writes only while receiving",
        "\(count) bytes at \(offset) into \(slot), transfer \(describe(transfer))")
    }
    let end = UInt64(offset) + UInt64(count)
    let spanEnd = UInt64(transfer.committedOffset) + UInt64(configuration.receiveSpan)
    if count == 0 || offset < transfer.committedOffset || end > spanEnd || end > UInt64(transfer.size) {
      fail("writes inside the receive span and the image", "[\(offset), \(end)) with \(describe(transfer))")
    }
  }

  private mutating func checkCommit(_ journal: TransferJournal) {
    guard let transfer, sameImage(journal, transfer), journal.state == .receiving else {
      return fail("commits continue the transfer", "\(journal) with transfer \(describe(transfer))")
    }
    let limit = min(
      UInt64(transfer.committedOffset) + UInt64(configuration.windowCapacity), UInt64(transfer.size))
    if journal.committedOffset <= transfer.committedOffset || UInt64(journal.committedOffset) > limit {
      fail(
        "committed offset moves forward by at most a window",
        "\(transfer.committedOffset) to \(journal.committedOffset) of \(transfer.size)")
    }
  }

  private func sameImage(_ a: TransferJournal, _ b: TransferJournal) -> Bool {
    a.slot == b.slot && a.size == b.size && a.crc32 == b.crc32 && a.version == b.version
  }

  private func passedCheck(_ journal: TransferJournal) -> Bool {
    validImage == ValidImage(slot: journal.slot, size: journal.size, crc32: journal.crc32)
      && journal.committedOffset == journal.size
  }

  private func describe(_ journal: TransferJournal?) -> String {
    guard let journal else { return "none" }
    return "\(journal.slot) \(journal.state) \(journal.committedOffset)/\(journal.size)"
  }
}
