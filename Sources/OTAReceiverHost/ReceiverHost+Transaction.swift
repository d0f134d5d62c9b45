import OTABoot
import OTAEngine
import OTAJournal
import OTAStorage
import OTAWire

/// What a protocol adapter gets back when the transaction, the storage or the image check said no.
public enum TransactionError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The transaction refused the request (a stale identity, another session, a sealed slot).
  case refused(TransactionRefusal)
  /// The storage failed (logged through `storageFailures`); the text is for the log.
  case storage(String)
  /// The image check refused the image: the OTA status and the reason.
  case imageInvalid(StatusCode, reason: String)
  /// Something on the device holds the activation back (docs/OTAD.md, "The device has a say"): it
  /// is kept, and the device activates on its own once nothing holds it. The detail is for the log.
  case deferred(ActivationDeferral, detail: String)
  /// The device's owner declined this update: the transfer was dropped.
  case declined(Version)

  public var description: String {
    switch self {
    case .refused(let refusal): "refused: \(refusal)"
    case .storage(let why): "storage failed: \(why)"
    case .imageInvalid(let status, let reason): "the image check refused the image (\(status)): \(reason)"
    case .deferred(let deferral, let detail):
      "the activation is kept, not carried out now (\(deferral.reason)): \(detail)"
    case .declined(let version): "the device's owner declined \(version): the image was dropped"
    }
  }
}

/// The update transaction as every protocol adapter drives it (SMP, Nordic's Legacy and Secure
/// DFU; the OTA engine's own IO takes the same path through `performForEngine`): a transfer begins,
/// and each write, commit, validation, activation or discard carries its identity; the
/// transaction authorizes it against the current transfer and the boot state before any IO.
extension ReceiverHost {
  /// The OTA central, as the work budget knows it: one at a time on the link.
  public static let otaClient = "OTA central"

  /// The loop's time, for the sessions' leases (`UpdateTransaction.leaseTimeout`).
  public mutating func advance(to now: Duration) {
    transaction.now = max(transaction.now, now)
  }

  /// Begins a new transfer of `size` bytes into the inactive slot for `owner`:
  /// refused while another session holds the device or the running image needs its verdict; else
  /// the slot is prepared (the earlier journal removed, the slot marked empty) and the journal
  /// written. Every earlier identity is stale from here on, whatever happens below.
  public mutating func begin(
    _ owner: TransferOwner, size: UInt32, crc32: UInt32, version: Version
  ) throws(StorageError) -> Result<UpdateTransaction.Transfer, TransactionError> {
    let result = try beginUnsynced(owner, size: size, crc32: crc32, version: version)
    syncEngineTransfer()
    return result
  }

  /// `begin` without the engine brought into line: the engine's own PREPARE is under way.
  private mutating func beginUnsynced(
    _ owner: TransferOwner, size: UInt32, crc32: UInt32, version: Version
  ) throws(StorageError) -> Result<UpdateTransaction.Transfer, TransactionError> {
    let slot = running.other
    if let refusal = transaction.mayBegin(owner, slot: slot, boot: boot, running: running) {
      return .failure(.refused(refusal))
    }
    let journal = TransferJournal(
      slot: slot, state: .receiving, size: size, crc32: crc32, version: version, committedOffset: 0,
      owner: owner)
    let result = try perform(.prepare(journal))
    guard case .done = result else {
      // The old journal went first: nothing is under way any more.
      transaction.forget()
      return .failure(.storage("\(result)"))
    }
    let id = transaction.began(journal)
    // The image a kept activation named is gone: so is the activation (not only at the next look).
    // A record left behind by a failed removal names no image any more: dropped at the next look.
    do {
      try forgetKeptActivation()
    } catch .powerCut {
      throw .powerCut
    } catch {}
    return .success(UpdateTransaction.Transfer(id: id, journal: journal))
  }

  /// Carries out `io` for the transfer `id`, once the transaction authorized it.
  public mutating func perform(_ io: ReceiverIO, for id: TransferID) throws(StorageError)
    -> Result<IOResult, TransactionError>
  {
    let result = try transact(io, for: id)
    syncEngineTransfer()
    return result
  }

  /// `perform` without the engine brought into line (the engine's own IO, or a step of a longer one).
  private mutating func transact(_ io: ReceiverIO, for id: TransferID) throws(StorageError)
    -> Result<IOResult, TransactionError>
  {
    if let refusal = transaction.authorize(io, by: id, boot: boot, running: running) {
      return .failure(.refused(refusal))
    }
    let result = try perform(io)
    transaction.completed(io, by: id, result)
    if case .failed(let why) = result { return .failure(.storage(why)) }
    return .success(result)
  }

  /// The transfer is whole in its slot: its CRC32 computed from the slot when its protocol sent
  /// none (`crc32` nil), committed, the image checked as VALIDATE checks it, and the slot sealed.
  /// An image the check refuses is discarded. Returns the validated journal.
  public mutating func validate(_ id: TransferID, crc32 given: UInt32? = nil) throws(StorageError)
    -> Result<TransferJournal, TransactionError>
  {
    guard var journal = transaction.current(id)?.journal else {
      return .failure(.refused(.stale(id)))
    }
    let crc32: UInt32
    if let given {
      crc32 = given
    } else if let sent = try sentCRC32(of: journal) {
      // An encrypted image partly decrypted in place before a power cut: the slot no longer holds
      // the bytes as sent, the record still has their CRC32.
      crc32 = sent
    } else {
      switch try perform(.checkWindow(slot: journal.slot, offset: 0, length: journal.size), for: id) {
      case .success(.crc32(let computed)): crc32 = computed
      case .success(let other): return .failure(.storage("\(other)"))
      case .failure(let error): return .failure(error)
      }
    }
    journal.crc32 = crc32
    journal.committedOffset = journal.size
    if case .failure(let error) = try perform(.commit(journal), for: id) { return .failure(error) }
    switch try perform(.checkImage(journal), for: id) {
    case .success(.image(.valid)): break
    case .success(.image(.invalid(let status, let reason))):
      _ = try perform(.discard(answer: Response(requestOpcode: 0, status: status)), for: id)
      return .failure(.imageInvalid(status, reason: reason))
    case .success(let other): return .failure(.storage("\(other)"))
    case .failure(let error): return .failure(error)
    }
    journal.state = .validated
    if case .failure(let error) = try perform(.recordValidated(journal), for: id) { return .failure(error) }
    return .success(journal)
  }

  /// Activates the validated transfer `id`: its image checked once more, its seal recorded, the
  /// boot pointer moved (a trial, or for good when `permanent`).
  public mutating func activate(_ id: TransferID, permanent: Bool) throws(StorageError)
    -> Result<TransferJournal, TransactionError>
  {
    guard let journal = transaction.current(id)?.journal else { return .failure(.refused(.stale(id))) }
    if journal.state == .validated, !transaction.heldByAnother(id.owner) {
      switch try weighRequestedActivation(journal, permanent: permanent) {
      case .go: break
      case .hold(let reason, let detail, let after):
        return .failure(
          .deferred(
            ActivationDeferral(reason: reason, askAgainAfter: UInt32(clamping: after)), detail: detail))
      case .declined, .windowPassed:
        try discard(id)
        try forgetKeptActivation()
        return .failure(.declined(journal.version))
      }
    }
    return try activateNow(id, permanent: permanent)
  }

  /// Activates the validated transfer `id` without asking what holds it (it was asked).
  mutating func activateNow(_ id: TransferID, permanent: Bool) throws(StorageError)
    -> Result<TransferJournal, TransactionError>
  {
    guard let journal = transaction.current(id)?.journal else { return .failure(.refused(.stale(id))) }
    switch try perform(.activate(journal, permanent: permanent), for: id) {
    case .success(.image(.invalid(let status, let reason))):
      return .failure(.imageInvalid(status, reason: reason))
    case .success:
      try forgetKeptActivation()
      return .success(journal)
    case .failure(let error): return .failure(error)
    }
  }

  /// Drops the transfer `id` (its journal removed); nothing when it is no longer the current one.
  public mutating func discard(_ id: TransferID) throws(StorageError) {
    _ = try perform(.discard(answer: Response(requestOpcode: 0, status: .success)), for: id)
  }

  /// The current transfer when `id` is its identity.
  public func transfer(_ id: TransferID) -> TransferJournal? { transaction.current(id)?.journal }

  /// `owner` takes its own transfer up again (after a restart of otad, or a reconnection); nil
  /// when there is none or another protocol's session holds the device.
  public mutating func resume(_ owner: TransferOwner) -> UpdateTransaction.Transfer? {
    transaction.resume(owner)
  }

  /// `owner` takes over a validated transfer while no other session holds the device, to activate it.
  public mutating func claimValidated(_ owner: TransferOwner) -> UpdateTransaction.Transfer? {
    let claimed = transaction.claimValidated(owner)
    syncEngineTransfer()
    return claimed
  }

  /// The inactive slot forgotten for `owner` (SMP's erase): the transfer under way
  /// dropped, whoever began it, and the slot's image marked empty (never booted; its bytes stay
  /// until the next transfer overwrites them). Refused while another session holds the device or
  /// the slot is armed.
  public mutating func forgetInactiveSlot(by owner: TransferOwner) throws(StorageError) -> TransactionRefusal?
  {
    let other = running.other
    if transaction.heldByAnother(owner) { return .busy(transaction.lease?.owner ?? owner) }
    if boot.trial?.slot == other || boot.confirmed == other {
      return .slotInUse(other, "holds an image the next boot needs")
    }
    if let current = transaction.transfer { try discard(current.id) }
    if boot[other].status != .empty {
      var invalidated = false
      try changeBoot { invalidated = $0.invalidate(other) }
      if !invalidated { return .slotInUse(other, "the stored boot state says it runs or is confirmed") }
    }
    return nil
  }

  /// `owner`'s session ended: the device is free for another protocol.
  public mutating func release(_ owner: TransferOwner) {
    transaction.release(owner)
  }

  /// The OTA engine's IO, through the same transaction as every adapter's: PREPARE begins a
  /// transfer of the OTA protocol's; everything else carries its current identity.
  mutating func performForEngine(_ io: ReceiverIO) throws(StorageError) -> IOResult {
    switch io {
    case .prepare(let journal):
      switch try beginUnsynced(.ota, size: journal.size, crc32: journal.crc32, version: journal.version) {
      case .success: return .done
      case .failure(let error): return .failed("\(error)")
      }
    case .hashRunning(let blockSize, let first, let count, let imageSize):
      // Charged to the OTA central's budget of slot hashing: the bytes it makes the device read.
      let start = UInt64(first) * UInt64(blockSize)
      let bytes =
        start < UInt64(imageSize) ? min(UInt64(count) * UInt64(blockSize), UInt64(imageSize) - start) : 0
      workBudget.charge(Self.otaClient, bytes: bytes, now: transaction.now)
      imageHashBytesRead += bytes
      return try perform(io)
    case .readRunning, .decodeFrame, .confirm:
      return try perform(io)
    case .activate(let journal, let permanent):
      guard let ota = transaction.current(of: .ota) else {
        return .failed("refused: the OTA protocol holds no transfer")
      }
      if transaction.authorize(io, by: ota.id, boot: boot, running: running) == nil {
        switch try weighRequestedActivation(journal, permanent: permanent) {
        case .go: break
        case .hold(let reason, _, let after):
          return .deferred(ActivationDeferral(reason: reason, askAgainAfter: UInt32(clamping: after)))
        case .declined, .windowPassed:
          try forgetKeptActivation()
          return .image(.invalid(.declined, reason: "the device's owner declined \(journal.version)"))
        }
      }
      switch try transact(io, for: ota.id) {
      case .success(let result):
        if case .done = result { try forgetKeptActivation() }
        return result
      case .failure(let error): return .failed("\(error)")
      }
    default:
      guard let ota = transaction.current(of: .ota) else {
        return .failed("refused: the OTA protocol holds no transfer")
      }
      switch try transact(io, for: ota.id) {
      case .success(let result): return result
      case .failure(let error): return .failed("\(error)")
      }
    }
  }
}
