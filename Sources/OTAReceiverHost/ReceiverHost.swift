import OTABoot
import OTAChecksum
import OTAEngine
import OTAJournal
import OTAStorage
import OTATrust
import OTAWire

/// The device side's IO edge: feeds events to the `ReceiverEngine` and carries out the IO it asks
/// for against `DeviceStorage`, in order, one at a time. Storage failures become statuses on the wire;
/// only a (simulated) power cut escapes, because then the whole process is gone.
public struct ReceiverHost: Sendable {
  public enum Output: Equatable, Sendable {
    case notify([UInt8])
    case armTimer(at: Duration)
    case restart
  }

  public let storage: DeviceStorage
  public let control: BootControl
  public internal(set) var engine: ReceiverEngine
  /// The one update transaction: who writes the inactive slot, under which identity, and whether
  /// it is sealed. Every IO that touches a transfer is authorized by it first.
  public internal(set) var transaction: UpdateTransaction
  /// The boot state as last read or written.
  public private(set) var boot: BootState
  /// The slot this process runs from: never written.
  public let running: SlotID
  public let imageCheck: ImageCheck
  /// Writes need an encrypted, authenticated link (said in Info; BlueZ enforces it).
  public let pairingRequired: Bool
  /// Why the last image check refused the image, for the log.
  public private(set) var lastImageRejection: String?
  /// What the start found wrong and put right (a damaged record moved aside), for the log.
  public internal(set) var startNotices: [String] = []
  /// Storage failures since the last `takeStorageFailures()`, for the log: the wire only says 0x0B.
  public private(set) var storageFailures: [StorageError] = []
  /// A fault asked for (docs/APP-TESTING.md, `storage-full`): the next write to the slot being
  /// written fails with this error, through the same path a real failure takes. Never the running
  /// slot's: it is not written.
  public var injectedWriteFailure: StorageError?
  private var writer: (slot: SlotID, writer: any SlotWriter)?
  /// Chunks that continue one another, held until a window needs them in the slot.
  private var gathered = ChunkGatherer()
  /// The transfer journal's file, written in place per committed window.
  var journalStore: TransferJournalStore
  /// True while `DecryptionRecord`'s file may exist (an encrypted image decrypted, or under way).
  var decryptionRecorded = false
  /// Bytes an encrypted image's in-place decryption takes per block: each costs one record
  /// replacement (holding the block) and one sync of the slot.
  public var decryptionBlockSize = 64 * 1024
  /// The running slot's block hashes, computed on the first read and kept while the running
  /// image (slot, size, CRC32) stays the same.
  var blockHashCache: (identity: RunningImageIdentity, value: BlockHashes)?
  /// Each slot's image hash, computed once per state of the slot (`imageHash`).
  var slotHashes = SlotHashCache()
  /// Bytes read and hashed for image hashes and BLOCK HASHES since the start (what the work budget
  /// charges).
  public internal(set) var imageHashBytesRead: UInt64 = 0
  /// How much slot hashing each client may make the device do (`WorkBudget`).
  public var workBudget = WorkBudget()
  /// The running image as its own MCUboot header and hash show it, when the boot state records no
  /// size for it (a device never updated: its factory image). Surveyed once at start.
  var surveyedRunningImage: (size: UInt32, crc32: UInt32)?
  /// What the device's owner configured about activations: consent, the maximum deferral.
  public var activationPolicy = ActivationPolicy()
  /// The wall clock and the update locks, read at the edge (`ActivationSurroundings`).
  public var surroundings: any ActivationSurroundings = QuietSurroundings()
  /// The activation the device keeps for the validated image (a deferred ACTIVATE, a SCHEDULE), as
  /// its record says; nil when none.
  public internal(set) var keptActivation: KeptActivationRecord?
  /// What the last weighing of an activation said, and when (wall clock), for Info and the status.
  public internal(set) var lastActivationVerdict: (verdict: ActivationPolicy.Verdict, at: Int64)?
  /// The running slot's size, at most 4 GiB - 1 (Info's fields are 32-bit): what BLOCK HASHES
  /// hashes and operations read when no running image is known. 0 when the slot cannot be opened.
  let runningSlotExtent: UInt32

  /// Loads the boot state and the journal, and resumes a transfer that was under way. `running` is
  /// what the boot stage decided; by default what the bootloader reports, else what the state says.
  public init(
    storage: DeviceStorage, control: BootControl, running: SlotID? = nil, windowCapacity: UInt32 = 64 * 1024,
    windowGrace: Duration = .milliseconds(400), imageCheck: ImageCheck, pairingRequired: Bool = false,
    features: Features = .all, receiveSpan: UInt32? = nil
  ) throws(StorageError) {
    self.storage = storage
    self.pairingRequired = pairingRequired
    self.control = control
    self.imageCheck = imageCheck
    let boot = try Self.storageErrors { () throws(BootError) in try control.current() }
    self.boot = boot
    let runningSlot: SlotID
    if let decided = running {
      runningSlot = decided
    } else {
      runningSlot = try Self.storageErrors { () throws(BootError) in try control.runningSlot(boot) }
    }
    self.running = runningSlot
    surveyedRunningImage = try Self.survey(running: runningSlot, boot, storage, imageCheck.policy)
    // A slot that cannot be opened only means nothing to copy from (reads of it report their failure).
    runningSlotExtent =
      (try? storage.slots.reader(runningSlot).capacity).map {
        UInt32(min($0, UInt64(UInt32.max)))
      } ?? 0
    journalStore = TransferJournalStore(records: storage.records)
    let (loaded, movedAside) = try journalStore.load()
    for name in movedAside {
      startNotices.append(
        "the transfer journal \(name) failed its checks; moved aside to \(name)\(RecordName.damagedSuffix): "
          + "a transfer under way starts again from PREPARE")
    }
    let capacity = try storage.slots.reader(runningSlot.other).capacity
    // A journal for the slot that now runs (the activation happened), or one that no longer fits.
    let journal = loaded.value.flatMap { $0.slot != runningSlot && UInt64($0.size) <= capacity ? $0 : nil }
    if loaded.value != nil, journal == nil { try journalStore.remove() }
    transaction = UpdateTransaction(resuming: journal)
    decryptionRecorded = try storage.records.load(DecryptionRecord.fileName) != nil
    let configuration = ReceiverConfiguration(
      slotCapacity: capacity, windowCapacity: windowCapacity, windowGrace: windowGrace, features: features,
      receiveSpan: receiveSpan)
    // The OTA engine holds only the OTA protocol's own transfer: another protocol's is not its to go on.
    engine = ReceiverEngine(
      configuration: configuration, runningSlot: runningSlot,
      runningOnTrial: Self.unconfirmed(boot, runningSlot),
      journal: journal?.owner == .ota ? journal : nil)
    syncEngine()
    try loadKeptActivation()
  }

  /// Running anything but the confirmed slot (a trial, or a slot the bootloader started against the
  /// state), or a provisional state rebuilt from evidence that did not settle which slot was good:
  /// the other slot may hold the only known-good image, so PREPARE is refused.
  public static func unconfirmed(_ boot: BootState, _ running: SlotID) -> Bool {
    boot.runningOnTrial || running != boot.confirmed || boot.provisional
  }

  /// True while this process runs a trial that still needs its verdict.
  public var runningOnTrial: Bool { boot.runningOnTrial && boot.trial?.slot == running }

  /// The trial proved itself (health check passed, CONFIRM, SMP's confirm): keep it, once its slot
  /// is read again against its seal. A slot that no longer holds the bytes its activation checked
  /// is marked bad instead (`sealBroken`): returns why, and the caller restarts into the confirmed
  /// slot.
  @discardableResult
  public mutating func markGood() throws(StorageError) -> String? {
    if runningOnTrial, case .broken(let why) = control.checkSeal(running, in: boot) {
      try changeBoot { $0.markBad(.sealBroken) }
      return why
    }
    try changeBoot { $0.markGood() }
    return nil
  }

  /// The running slot was marked bad (its seal broke at a confirmation, or `otad mark-bad`): it must
  /// not go on running; the caller restarts into the confirmed slot.
  public var runningMarkedBad: Bool { boot[running].status == .bad }

  /// The running slot of a provisional rebuilt state proved itself: the state is saved as it is.
  public mutating func confirmProvisional() throws(StorageError) {
    try changeBoot { $0.confirmProvisional() }
  }

  /// The running slot of a provisional rebuilt state did not prove itself: the other slot, when it
  /// holds a verified image that has not failed too, is kept instead (`BootControl.abandonProvisional`).
  /// Returns that slot (the caller restarts into it), or nil.
  public mutating func abandonProvisional() throws(StorageError) -> SlotID? {
    let control = control
    let running = running
    return try Self.storageErrors { () throws(BootError) in try control.abandonProvisional(running) }
  }

  /// This boot of the trial failed: the next boot tries again, or, with no boots left, the trial is
  /// marked bad and the confirmed slot boots again. The caller restarts either way.
  public mutating func failTrialBoot(_ reason: UpdateOutcome.Reason) throws(StorageError) {
    try changeBoot { $0.failBoot(reason) }
  }

  /// The trial failed: its slot is bad, the confirmed slot boots again. The caller restarts.
  public mutating func markBad(_ reason: UpdateOutcome.Reason) throws(StorageError) {
    try changeBoot { $0.markBad(reason) }
  }

  /// Reads the boot state again (after `otad mark-good` or `mark-bad` changed it). Returns false when
  /// the state no longer wants the slot this process runs: the caller restarts.
  public mutating func reloadBootState() throws(StorageError) -> Bool {
    let control = control
    boot = try Self.storageErrors { () throws(BootError) in try control.current() }
    syncEngine()
    return boot.running == running
  }

  /// Handles one event and every IO it leads to; returns what must go out.
  public mutating func handle(_ event: ReceiverEvent) throws(StorageError) -> [Output] {
    switch event {
    case .disconnected:
      transaction.release(.ota)
    case .control(let bytes, let now), .data(let bytes, let now):
      transaction.now = max(transaction.now, now)
      if transaction.current(of: .ota) != nil { transaction.touch(.ota) }
      if case .control = event, bytes.first == Opcode.prepare.rawValue,
        case .prepare? = try? Request(bytes: bytes),
        transaction.heldByAnother(.ota)
      {
        // Another protocol's session holds the device: PREPARE waits, in the OTA protocol's terms.
        return [.notify(Response(.prepare, .busy).encoded)]
      }
    case .tick(let now):
      transaction.now = max(transaction.now, now)
    default:
      break
    }
    if case .control(let bytes, _) = event, bytes.first == Opcode.schedule.rawValue,
      engine.configuration.features.contains(.scheduledActivation)
    {
      return [.notify(try schedule(bytes).encoded)]
    }
    if case .control(let bytes, let now) = event, bytes.first == Opcode.blockHashes.rawValue,
      engine.configuration.features.contains(.blockHashRequests), !workBudget.admits(Self.otaClient, now: now)
    {
      // Past its budget of slot hashing: BLOCK HASHES waits, in the OTA protocol's terms.
      return [.notify(Response(requestOpcode: Opcode.blockHashes.rawValue, status: .busy).encoded)]
    }
    var outputs: [Output] = []
    var next: ReceiverEvent? = event
    while let current = next {
      next = nil
      for action in engine.handle(current) {
        switch action {
        case .notify(let bytes): outputs.append(.notify(bytes))
        case .armTimer(let due): outputs.append(.armTimer(at: due))
        case .restart: outputs.append(.restart)
        case .perform(let io): next = .completed(try performForEngine(io))
        }
      }
    }
    // The engine takes a CONFIRM's success as "confirmed"; the boot state has the last word (a
    // bootloader may run a slot the state does not confirm). Data chunks, the hot path, skip this.
    if case .control = event { syncEngine() }
    return outputs
  }

  /// The OTA engine follows the transaction: when another protocol's transfer replaced the OTA
  /// protocol's (or the OTA one ended behind its back), the engine is rebuilt around what is left.
  mutating func syncEngineTransfer() {
    let ota = transaction.current(of: .ota)?.journal
    guard engine.transfer != ota else { return }
    engine = ReceiverEngine(
      configuration: engine.configuration, runningSlot: running,
      runningOnTrial: Self.unconfirmed(boot, running),
      journal: ota)
    syncEngine()
  }

  /// Tells the engine what the boot state and the policy say: whether PREPARE is allowed at all
  /// (not while on trial) and from which version on.
  private mutating func syncEngine() {
    engine.updateRunningOnTrial(Self.unconfirmed(boot, running))
    engine.updateConfirmRefused(boot.provisional && !pairingRequired && !boot.runningOnTrial)
    // No oracle: a slot nobody adopted (no image recorded or surveyed) offers its bytes to copies
    // and BLOCK HASHES only over an authenticated link; else a 1-byte copy and a guessed WINDOW CRC
    // would read it a byte at a time.
    engine.updateRunningImage(size: runningImage.size, slotExtent: pairingRequired ? runningSlotExtent : 0)
    engine.updateMinimumVersion(imageCheck.policy.allowDowngrade ? nil : boot[boot.confirmed].version)
  }

  /// The Info characteristic's value now, for a central at `mtu` (by default the MTU the engine last
  /// heard of: a read may come before the event that tells it).
  public func info(mtu: ATTMTU? = nil) -> InfoRecord {
    let maxChunkPayload =
      mtu.map { UInt16(DataChunk.maxPayload(mtu: $0)) } ?? engine.maxChunkPayload
    let transfer = engine.transfer
    let inactive = running.other
    let content: SlotContent =
      switch engine.phase {
      case .preparing, .receiving, .validating: .receiving
      case .validated: .validated
      case .activating: .pendingTrial
      case .idle:
        switch boot[inactive].status {
        case .empty: .unknown
        case .good: .good
        case .trial: .pendingTrial
        case .bad: .bad
        }
      }
    var info = InfoRecord(
      state: engine.transferStatus.state, runningSlot: running,
      flags: infoFlags,
      slotVersions: boot.slots.map { $0.status == .empty ? .zero : $0.version },
      inactiveSlotContent: content,
      slotCapacity: UInt32(clamping: engine.configuration.slotCapacity),
      windowCapacity: engine.configuration.windowCapacity, maxChunkPayload: maxChunkPayload,
      transfer: engine.transferStatus, transferVersion: transfer?.version ?? .zero, lastOutcome: boot.outcome,
      chunksDropped: UInt32(clamping: engine.statistics.chunksDropped),
      features: engine.configuration.features)
    info.maxOperationLength = engine.maxOperationLength
    info.maxFrameLength = engine.maxFrameLength
    info.runningImageSize = runningImage.size
    info.runningImageCRC = runningImage.crc32
    info.receiveSpan = engine.configuration.receiveSpan
    if engine.configuration.features.contains(.scheduledActivation) {
      info.keptActivation = keptActivationInfo
    }
    return info
  }

  /// The running slot's image as the boot state records it (size 0 when its slot is empty: a
  /// factory state knows no size, so no operation may copy from it).
  public var runningImage: (size: UInt32, crc32: UInt32) {
    let slot = boot[running]
    if slot.status != .empty, slot.size > 0 { return (slot.size, slot.crc32) }
    return surveyedRunningImage ?? (0, 0)
  }

  /// A running slot the boot state knows no size for (the factory state records only a version):
  /// an MCUboot image there says its own length, and its SHA-256 (and signature, when the policy
  /// asks) proves those bytes are the image; then its size and CRC32 are what operations may copy.
  static func survey(running: SlotID, _ boot: BootState, _ storage: DeviceStorage, _ policy: ImagePolicy)
    throws(StorageError) -> (size: UInt32, crc32: UInt32)?
  {
    guard boot[running].status != .empty, boot[running].size == 0 else { return nil }
    // A slot that cannot be read only means no copies; a power cut ends the process as anywhere.
    let evidence = try ImageVerifier.surveyTolerant(
      { () throws(StorageError) in try storage.slots.reader(running) }, policy: policy)
    guard case .verified(let report) = evidence, report.size > 0, report.size <= UInt64(UInt32.max) else {
      return nil
    }
    return (UInt32(report.size), report.crc32)
  }

  private var infoFlags: InfoRecord.Flags {
    var flags: InfoRecord.Flags = []
    if boot.runningOnTrial || running != boot.confirmed { flags.insert(.runningOnTrial) }
    if boot.provisional { flags.insert(.bootStateRebuilt) }
    if imageCheck.policy.requiresSignature { flags.insert(.signaturesRequired) }
    if imageCheck.policy.decryptionKey != nil { flags.insert(.decryptsImages) }
    if pairingRequired { flags.insert(.pairingRequired) }
    if activationPolicy.requireConsent { flags.insert(.consentRequired) }
    return flags
  }

  // MARK: IO

  /// Carries out one IO, already authorized by the transaction. Storage failures become
  /// `.failed`; only a power cut is thrown.
  mutating func perform(_ io: ReceiverIO) throws(StorageError) -> IOResult {
    do {
      return try performOrThrow(io)
    } catch .powerCut {
      throw .powerCut
    } catch {
      // Bounded: the log takes them after every event, and only the first few of a burst matter.
      if storageFailures.count < 16 { storageFailures.append(error) }
      return .failed(error.description)
    }
  }

  /// Keeps a storage failure for the log (the first few of a burst).
  mutating func noteStorageFailure(_ error: StorageError) {
    if storageFailures.count < 16 { storageFailures.append(error) }
  }

  /// The storage failures since the last call, oldest first, for the log.
  public mutating func takeStorageFailures() -> [StorageError] {
    defer { storageFailures.removeAll() }
    return storageFailures
  }

  private mutating func performOrThrow(_ io: ReceiverIO) throws(StorageError) -> IOResult {
    switch io {
    case .write(let slot, let offset, let bytes):
      if let failure = injectedWriteFailure {
        injectedWriteFailure = nil
        throw failure
      }
      if !gathered.continues(slot, at: offset, count: bytes.count) {
        try writeOutGathered()
        // Opened now, through the guard that refuses the running slot, so a refusal answers this chunk.
        _ = try slotWriter(slot)
      }
      gathered.hold(bytes, of: slot, at: offset)
      return .done
    case .readRunning(let offset, let length):
      // The running slot, through its reader: never the slot being written, and no flush of the
      // chunks gathered for it.
      return .bytes(try storage.slots.reader(running).read(at: UInt64(offset), count: Int(length)))
    case .decodeFrame(let frame, let prefixSize, let maxLength):
      // The running slot too, mapped for the decoder; the gathered chunks stay held.
      let decoded = try storage.slots.reader(running).withBytes(at: 0, count: Int(prefixSize)) { prefix in
        Result { () throws(ZstdFrameError) in
          try ZstdFrame.decode(frame, prefix: prefix, maxLength: Int(maxLength))
        }
      }
      switch decoded {
      case .success(let bytes): return .bytes(bytes)
      case .failure(let error): return .failed("\(error)")
      }
    case .hashRunning(let blockSize, let first, let count, let imageSize):
      // The running slot too, and the gathered chunks stay held: the transfer is not touched.
      return .hashes(
        try runningBlockHashes(blockSize: blockSize, first: first, count: count, imageSize: imageSize))
    case .prepare, .discard:
      // The transfer the held chunks belonged to is being replaced or dropped.
      gathered.discard()
    default:
      try writeOutGathered()
      if let failure = gathered.takeFailure() { throw failure }
    }
    return try performUngathered(io)
  }

  /// Writes the held chunks to their slot; a failure waits in `gathered` for the next window.
  private mutating func writeOutGathered() throws(StorageError) {
    guard let slot = gathered.slot, !gathered.isEmpty else { return }
    try gathered.writeOut(to: try slotWriter(slot))
  }

  private mutating func performUngathered(_ io: ReceiverIO) throws(StorageError) -> IOResult {
    switch io {
    case .prepare(let journal):
      guard journal.slot != running, journal.slot != boot.confirmed else {
        return .failed("slot \(journal.slot) holds the running or confirmed image")
      }
      // An earlier transfer's journal goes first: the slot is about to change under it, and a
      // restart after a failure below must not resume (or activate) what it described.
      try journalStore.remove()
      try forgetDecryption()
      if boot[journal.slot].status != .empty {
        // The change is made to the state read under the lock, which has the last word.
        var invalidated = false
        try changeBoot { invalidated = $0.invalidate(journal.slot) }
        guard invalidated else {
          return .failed("the stored boot state says slot \(journal.slot) runs or holds the confirmed image")
        }
      }
      try slotWriter(journal.slot).prepare(forImageOf: UInt64(journal.size))
      try journalStore.write(journal)
    case .write, .readRunning, .hashRunning, .decodeFrame:
      preconditionFailure("chunk writes are gathered, running-slot reads done at once")
    case .checkWindow(let slot, let offset, let length):
      let bytes = try slotWriter(slot).read(at: UInt64(offset), count: Int(length))
      return .crc32(CRC32.checksum(bytes))
    case .commit(let journal):
      try slotWriter(journal.slot).sync()
      try journalStore.write(journal)
    case .checkImage(let journal):
      // An encrypted image is checked as sent, then decrypted in place (again after a power cut
      // from where it stopped): what VALIDATE leaves in the slot is what will run.
      let plaintextBelow = try resumeDecryption(journal)
      switch try checkImage(journal, plaintextBelow: plaintextBelow) {
      case .valid:
        try decryptInPlace(journal, from: plaintextBelow)
        return .image(.valid)
      case .invalid(let status, let reason): return .image(.invalid(status, reason: reason))
      }
    case .recordValidated(let journal):
      try journalStore.write(journal)
    case .activate(let journal, let permanent):
      // Checked again right before the boot pointer moves: the slot may have changed since
      // VALIDATE (a restart in between), or the trusted keys may have.
      // The same pass seals the bytes: the boot stage boots them (and a trial is confirmed) only
      // while the slot still holds exactly these.
      // A validated encrypted image is decrypted whole: VALIDATE records the transfer as validated
      // only after its last block. The seal is of what will run.
      let plaintextBelow = try decryptedPayloadEnd(journal)
      let securityCounter: UInt32
      let seal: [UInt8]?
      let storedCRC32: UInt32
      switch try checkImage(journal, sealing: true, plaintextBelow: plaintextBelow) {
      case .valid(let counter, let digest, let stored):
        (securityCounter, seal, storedCRC32) = (counter, digest, stored)
      case .invalid(let status, let reason): return .image(.invalid(status, reason: reason))
      }
      let attempts = control.attempts
      var armed = false
      try changeBoot {
        armed = $0.activate(
          journal.slot, version: journal.version, size: journal.size, crc32: storedCRC32,
          securityCounter: securityCounter, seal: seal, attempts: attempts, permanent: permanent)
      }
      guard armed else {
        return .failed("the stored boot state says slot \(journal.slot) is the confirmed one")
      }
      try journalStore.remove()
      try forgetDecryption()
    case .confirm:
      // A rebuilt state is confirmed from the link only where the link authenticates the central
      // (bluetoothd passes on writes from paired centrals only); elsewhere its health check, or
      // `otad mark-good`, does it.
      if boot.provisional, pairingRequired, boot.confirmed == running {
        try changeBoot { $0.confirmProvisional() }
      } else if let why = try markGood() {
        return .image(.invalid(.validationFailed, reason: why))
      }
    case .discard:
      try journalStore.remove()
      try forgetDecryption()
    }
    return .done
  }

  public mutating func changeBoot(_ change: (inout BootState) -> Void) throws(StorageError) {
    let control = control
    boot = try Self.storageErrors { () throws(BootError) in try control.update(change) }
    syncEngine()
  }

  /// The whole image in `journal.slot`, judged against the confirmed image.
  mutating func checkImage(
    _ journal: TransferJournal, sealing: Bool = false, plaintextBelow: UInt64 = 0
  ) throws(StorageError) -> ImageCheck.Outcome {
    let outcome = try imageCheck.verify(
      try storage.slots.reader(journal.slot), journal, boot.installed, sealing, plaintextBelow)
    if case .invalid(_, let reason) = outcome {
      lastImageRejection = reason
    } else {
      lastImageRejection = nil
    }
    return outcome
  }

  /// Boot-state failures as the storage errors the wire knows (both answer "storage error").
  private static func storageErrors<T>(_ body: () throws(BootError) -> T) throws(StorageError) -> T {
    do {
      return try body()
    } catch {
      switch error {
      case .storage(let storage): throw storage
      case .backend(let backend): throw .bootloader(backend.description)
      }
    }
  }

  /// The inactive slot's writer, opened once through the one guard that refuses the running slot.
  mutating func slotWriter(_ slot: SlotID) throws(StorageError) -> any SlotWriter {
    slotMayChange(slot)
    if let writer, writer.slot == slot { return writer.writer }
    let opened = try storage.slots.openForWriting(slot, running: running)
    writer = (slot, opened)
    return opened
  }
}
