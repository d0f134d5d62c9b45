import OTAStorage
import OTATrust
import OTAWire

/// Why the boot state or the bootloader's pointer could not be read or changed.
public enum BootError: Error, Equatable, Sendable, CustomStringConvertible {
  case storage(StorageError)
  case backend(BootBackendError)

  public var description: String {
    switch self {
    case .storage(let error): "boot state: \(error)"
    case .backend(let error): "bootloader: \(error)"
    }
  }
}

/// The one way the boot state changes: under the state lock, load (repairing a damaged copy), change,
/// save, then make the bootloader agree (`BootBackend.apply`). The state is saved first, so a power
/// cut between the two leaves a bootloader that the next boot stage simply brings up to date.
/// Used by the boot stage, the daemon (PREPARE, ACTIVATE, CONFIRM, the health check) and
/// `otad mark-good`/`mark-bad`.
public struct BootControl: Sendable {
  public let store: BootStateStore
  public let backend: any BootBackend
  /// Serializes processes (daemon and command line); nil where only one process exists (tests).
  public let lock: StateLock?
  /// The version a never-updated device runs.
  public let factoryVersion: Version
  /// Boots a trial may take.
  public let attempts: UInt8
  /// The slots, read (never written) as evidence when the boot state must be rebuilt.
  public let slots: SlotAccess?
  /// How the slots' images are judged when the boot state must be rebuilt (signatures count).
  public let policy: ImagePolicy

  public init(
    records: any RecordStore, backend: any BootBackend, lock: StateLock? = nil, factoryVersion: Version,
    attempts: UInt8 = 3, slots: SlotAccess? = nil, policy: ImagePolicy = ImagePolicy()
  ) {
    store = BootStateStore(records: records)
    self.backend = backend
    self.lock = lock
    self.factoryVersion = factoryVersion
    self.attempts = max(1, attempts)
    self.slots = slots
    self.policy = policy
  }

  /// The state as it stands. When no usable state is on record, or the bootloader contradicts it,
  /// it is rebuilt from evidence (`BootStateRecovery`) and, when the evidence settles it, saved.
  public func current() throws(BootError) -> BootState {
    try locked { () throws(BootError) in try reading().state }
  }

  /// As `current`, with what was found on the way: copies moved aside, a recovery and its reasons.
  public func read() throws(BootError) -> BootStateReading {
    try locked { () throws(BootError) in try reading() }
  }

  /// What `read` would find, changing nothing on disk (no copy repaired or moved aside, no rebuilt
  /// state saved): for `otad status`.
  public func inspect() throws(BootError) -> BootStateReading {
    try reading(persist: false)
  }

  /// Whether `slot` still holds the image installed there (`InstalledImageCheck`); nil without slots.
  public func checkInstalledImage(_ slot: SlotID, in state: BootState) throws(BootError)
    -> InstalledImageCheck?
  {
    guard let slots else { return nil }
    let policy = policy
    return try storage { () throws(StorageError) in
      try InstalledImageCheck.check(
        slot, recorded: state[slot], reader: try slots.reader(slot), policy: policy)
    }
  }

  /// The slot running now: what the bootloader says it started, else what the state says.
  public func runningSlot(_ state: BootState) throws(BootError) -> SlotID {
    try bootedSlot() ?? state.running
  }

  /// Changes the state (if `change` changes it) and brings the bootloader up to date.
  @discardableResult
  public func update(_ change: (inout BootState) -> Void) throws(BootError) -> BootState {
    try locked { () throws(BootError) in
      let before = try reading().state
      var after = before
      change(&after)
      if after != before { try save(after) }
      if before.provisional, !after.provisional {
        try storage { () throws(StorageError) in try store.records.remove(BootStateStore.provisionalName) }
      }
      try apply(after.plan)
      return after
    }
  }

  /// The boot stage: decides with the table what runs now, persists the decision, and brings the
  /// bootloader up to date. The caller restarts when the decision says so.
  public func runBootStage() throws(BootError) -> BootDecision {
    try locked { () throws(BootError) in
      let reading = try reading()
      let booted = try bootedSlot()
      let factory = reading.recovery?.basis == .factory
      var state = reading.state
      // A trial about to boot is read again against its seal: bytes nobody checked never boot.
      let brokenSeal = state.trial.map { $0.attemptsLeft > 0 } == true ? rollBackBrokenSeal(&state) : nil
      var decision = BootDecision.decide(
        factory ? nil : state, booted: booted, factoryVersion: factoryVersion)
      decision.brokenSeal = brokenSeal
      if factory { decision.state = reading.state }
      // A factory state is what a missing one means already, and a provisional one is derived
      // again at each start: neither is saved until it changes for real.
      if decision.row != .noState, !decision.state.provisional, decision.state != reading.saved {
        try save(decision.state)
      }
      try apply(decision.state.plan)
      decision.reading = reading
      return decision
    }
  }

  /// Loads the state; rebuilds it from evidence when none is usable or the bootloader contradicts
  /// it, saving a rebuilt state that the evidence settles (a factory one needs no saving).
  func reading(persist: Bool = true) throws(BootError) -> BootStateReading {
    let (loaded, movedAside) = try storage { () throws(StorageError) in
      persist ? try store.loadReporting() : (try store.peek(), [])
    }
    let pointer = try backendCall { () throws(BootBackendError) in try backend.pointer() }
    var record: RecoveryEvidence.Record
    switch loaded {
    case .present(let state):
      let slots = slots
      let isBlank = { (slot: SlotID) in
        slots.map { slots in Self.isBlank({ () throws(StorageError) in try slots.reader(slot) }) } ?? false
      }
      guard let why = BootStateRecovery.contradiction(state, pointer, isBlank: isBlank) else {
        return BootStateReading(state: state, saved: state, movedAside: movedAside, recovery: nil)
      }
      record = .contradicted(state, why: why)
    case .missing: record = .missing
    case .damaged: record = .damaged
    }
    let evidence = try gatherEvidence(record, pointer)
    let recovery = BootStateRecovery.recover(evidence)
    var saved: BootState?
    if persist, recovery.certain, recovery.basis != .factory {
      try save(recovery.state)
      saved = recovery.state
    } else if persist, !recovery.certain, !evidence.unconfirmedRebuild {
      try storage { () throws(StorageError) in
        try store.records.replace(BootStateStore.provisionalName, with: [1])
      }
    }
    return BootStateReading(state: recovery.state, saved: saved, movedAside: movedAside, recovery: recovery)
  }

  /// What the journal, the bootloader and the slots' own images say. Slot A is not surveyed on a
  /// device that looks factory-new: it keeps slot A with the factory version.
  private func gatherEvidence(_ record: RecoveryEvidence.Record, _ pointer: BootPointer) throws(BootError)
    -> RecoveryEvidence
  {
    try storage { () throws(StorageError) in
      let journal = try TransferJournalStore.peek(store.records).value
      var evidence = RecoveryEvidence(
        record: record, pointer: pointer,
        journal: journal.map {
          JournalEvidence(slot: $0.slot, summary: "firmware \($0.version) \($0.state) into slot \($0.slot)")
        },
        slots: SlotPair(repeating: .unverifiable),
        damagedRecordsSeen: try store.damagedCopiesKept(), factoryVersion: factoryVersion)
      evidence.unconfirmedRebuild = try store.records.load(BootStateStore.provisionalName) != nil
      guard let slots else { return evidence }
      for slot in SlotID.allCases {
        evidence.blank[slot] = Self.isBlank({ () throws(StorageError) in try slots.reader(slot) })
      }
      // Slot B first: a verified image there is enough to tell a used device from a factory one.
      evidence.slots.b = try ImageVerifier.surveyTolerant(
        { () throws(StorageError) in try slots.reader(.b) }, policy: policy)
      if !evidence.looksFactory {
        evidence.slots.a = try ImageVerifier.surveyTolerant(
          { () throws(StorageError) in try slots.reader(.a) }, policy: policy)
      }
      return evidence
    }
  }

  /// The slot's first 4 KiB (or all of a smaller slot) are all 0x00 or all 0xFF; false when they
  /// cannot be read.
  static func isBlank(_ open: () throws(StorageError) -> any SlotReader) -> Bool {
    guard let reader = try? open(), reader.capacity > 0,
      let bytes = try? reader.read(at: 0, count: Int(min(4096, reader.capacity)))
    else { return false }
    return bytes.allSatisfy { $0 == 0 } || bytes.allSatisfy { $0 == 0xFF }
  }

  func storage<T>(_ body: () throws(StorageError) -> T) throws(BootError) -> T {
    do {
      return try body()
    } catch {
      throw .storage(error)
    }
  }

  func backendCall<T>(_ body: () throws(BootBackendError) -> T) throws(BootError) -> T {
    do {
      return try body()
    } catch {
      throw .backend(error)
    }
  }

  private func bootedSlot() throws(BootError) -> SlotID? {
    try backendCall { () throws(BootBackendError) in try backend.bootedSlot() }
  }

  private func save(_ state: BootState) throws(BootError) {
    try storage { () throws(StorageError) in try store.save(state) }
  }

  private func apply(_ plan: BootPlan) throws(BootError) {
    try backendCall { () throws(BootBackendError) in try backend.apply(plan) }
  }

  func locked<T>(_ body: () throws(BootError) -> T) throws(BootError) -> T {
    guard let lock else { return try body() }
    let result: Result<T, BootError>
    do {
      result = try lock.withLock(body)
    } catch {
      throw .storage(error)
    }
    return try result.get()
  }
}
