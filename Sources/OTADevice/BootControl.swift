import OTABoot
import OTAStorage
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

  public init(
    records: any RecordStore, backend: any BootBackend, lock: StateLock? = nil, factoryVersion: Version,
    attempts: UInt8 = 3
  ) {
    store = BootStateStore(records: records)
    self.backend = backend
    self.lock = lock
    self.factoryVersion = factoryVersion
    self.attempts = max(1, attempts)
  }

  /// The state as it stands; a factory state (around the slot the bootloader started) when none is usable.
  public func current() throws(BootError) -> BootState {
    try locked { () throws(BootError) in try loadOrFactory() }
  }

  /// The slot running now: what the bootloader says it started, else what the state says.
  public func runningSlot(_ state: BootState) throws(BootError) -> SlotID {
    try bootedSlot() ?? state.running
  }

  /// Changes the state (if `change` changes it) and brings the bootloader up to date.
  @discardableResult
  public func update(_ change: (inout BootState) -> Void) throws(BootError) -> BootState {
    try locked { () throws(BootError) in
      let before = try loadOrFactory()
      var after = before
      change(&after)
      if after != before { try save(after) }
      try apply(after.plan)
      return after
    }
  }

  /// The boot stage: decides with the table what runs now, persists the decision, and brings the
  /// bootloader up to date. The caller restarts when the decision says so.
  public func runBootStage() throws(BootError) -> BootDecision {
    try locked { () throws(BootError) in
      let loaded = try load()
      let booted = try bootedSlot()
      let decision = BootDecision.decide(loaded.state, booted: booted, factoryVersion: factoryVersion)
      // A factory state is what a missing one means already: nothing to save until it changes.
      if decision.row != .noState, decision.state != loaded.state { try save(decision.state) }
      try apply(decision.state.plan)
      return decision
    }
  }

  private func loadOrFactory() throws(BootError) -> BootState {
    if let state = try load().state { return state }
    return .factory(version: factoryVersion, confirmed: try bootedSlot() ?? .a)
  }

  private func load() throws(BootError) -> BootStateStore.Loaded {
    do {
      return try store.load()
    } catch {
      throw .storage(error)
    }
  }

  private func bootedSlot() throws(BootError) -> SlotID? {
    do {
      return try backend.bootedSlot()
    } catch {
      throw .backend(error)
    }
  }

  private func save(_ state: BootState) throws(BootError) {
    do {
      try store.save(state)
    } catch {
      throw .storage(error)
    }
  }

  private func apply(_ plan: BootPlan) throws(BootError) {
    do {
      try backend.apply(plan)
    } catch {
      throw .backend(error)
    }
  }

  private func locked<T>(_ body: () throws(BootError) -> T) throws(BootError) -> T {
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
