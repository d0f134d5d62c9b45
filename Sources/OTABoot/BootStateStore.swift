import OTAStorage
import OTAWire

/// Keeps the boot state in two records, `boot.state` and `boot.state.copy`, each replaced atomically,
/// the primary first (U-Boot's redundant environment and mcuboot's two trailers work alike). A power
/// cut between the two replaces leaves a new primary and an old copy: the primary wins. A record that
/// fails its checks is moved aside and never trusted; then the other copy is used and the primary
/// written again from it. Only when both are unusable does the device fall back to a factory state.
public struct BootStateStore: Sendable {
  public static let copyName = BootState.recordName + ".copy"
  /// Present while a provisional (rebuilt, unconfirmed) state is in force: written when the rebuild
  /// is made, removed once an operator confirms it and the state is saved.
  public static let provisionalName = "boot.provisional"

  public let records: any RecordStore

  public init(records: any RecordStore) { self.records = records }

  /// The boot state, repairing a damaged or missing copy from the other one. Missing: nothing was
  /// ever written (a factory device); damaged: both copies failed their checks (now moved aside).
  public func load() throws(StorageError) -> Loaded<BootState> { try loadReporting().loaded }

  /// As `load`, and the names of the copies that failed their checks and were moved aside now
  /// (each to `NAME.damaged`), for the log.
  public func loadReporting() throws(StorageError) -> (loaded: Loaded<BootState>, movedAside: [String]) {
    var movedAside: [String] = []
    let primary = try read(BootState.recordName)
    if primary.isDamaged { movedAside.append(BootState.recordName) }
    let copy = try read(Self.copyName)
    if copy.isDamaged { movedAside.append(Self.copyName) }
    return (try settle(primary, copy), movedAside)
  }

  /// True when a damaged copy was moved aside, now or at an earlier start: the device was in use.
  public func damagedCopiesKept() throws(StorageError) -> Bool {
    for name in [BootState.recordName, Self.copyName]
    where try records.load(name + RecordName.damagedSuffix) != nil {
      return true
    }
    return false
  }

  private func settle(_ primary: Loaded<BootState>, _ copy: Loaded<BootState>) throws(StorageError)
    -> Loaded<BootState>
  {
    switch (primary, copy) {
    case (.present(let state), .present(let other)):
      if state != other { try records.replace(Self.copyName, with: state.encoded) }
      return .present(state)
    case (.present(let state), _):
      try records.replace(Self.copyName, with: state.encoded)
      return .present(state)
    case (_, .present(let state)):
      try records.replace(BootState.recordName, with: state.encoded)
      return .present(state)
    case (.damaged(let reason), _), (_, .damaged(let reason)):
      return .damaged(reason: reason)
    case (.missing, .missing):
      return .missing
    }
  }

  /// Reads without repairing or moving anything: for `otad status`.
  public func peek() throws(StorageError) -> Loaded<BootState> {
    let primary = Loaded.decoding(try records.load(BootState.recordName), BootState.init(bytes:))
    if case .present = primary { return primary }
    let copy = Loaded.decoding(try records.load(Self.copyName), BootState.init(bytes:))
    if case .present = copy { return copy }
    return primary.isDamaged ? primary : copy
  }

  public func save(_ state: BootState) throws(StorageError) {
    try records.replace(BootState.recordName, with: state.encoded)
    try records.replace(Self.copyName, with: state.encoded)
  }

  private func read(_ name: String) throws(StorageError) -> Loaded<BootState> {
    let loaded = Loaded.decoding(try records.load(name), BootState.init(bytes:))
    if loaded.isDamaged { try records.moveAside(name) }
    return loaded
  }
}
