import OTABoot
import OTAEngine
import OTAJournal
import OTAWire

/// A transfer's identity: its owner and a serial the host hands out at each begin. A session keeps
/// the identity it was given; once another transfer has begun (or this one ended) the identity is
/// stale, and every request that carries it is refused.
public struct TransferID: Hashable, Sendable, CustomStringConvertible {
  public let owner: TransferOwner
  let serial: UInt64

  public var description: String { "\(owner)'s transfer #\(serial)" }
}

/// Why the update transaction refused a request. Each protocol answers it in its own terms
/// (docs/ARCHITECTURE.md, "One owner for the slot").
public enum TransactionRefusal: Error, Equatable, Sendable, CustomStringConvertible {
  /// The request carries an identity that is not the current transfer's: another began since, or
  /// this one ended (activated, discarded).
  case stale(TransferID)
  /// Another protocol's session holds the device: it acted within `UpdateTransaction.leaseTimeout`
  /// and has not gone.
  case busy(TransferOwner)
  /// The transfer was validated: its slot is sealed, no byte reaches it until a new transfer begins.
  case sealed(SlotID)
  /// The slot may not be written: the running one, the confirmed one, or one armed for a trial.
  case slotInUse(SlotID, String)
  /// The running image still needs its verdict: the other slot may hold the only good image.
  case runningUnconfirmed
  /// The request does not fit the transfer: bytes outside the image, a commit that goes back or
  /// claims more than the image, a validation before every byte is committed, an activation of a
  /// transfer not validated.
  case outOfOrder(String)

  public var description: String {
    switch self {
    case .stale(let id): "\(id) is no longer the transfer under way"
    case .busy(let owner): "\(owner) is updating the device"
    case .sealed(let slot): "slot \(slot) was validated and is sealed until a new transfer begins"
    case .slotInUse(let slot, let why): "slot \(slot) \(why)"
    case .runningUnconfirmed: "the running image is on trial and needs its verdict first"
    case .outOfOrder(let why): why
    }
  }
}

/// The one update transaction of the device, owned by `ReceiverHost`: idle → receiving (an owner, a
/// session, a transfer's identity) → validated (the slot sealed) → activated (armed in the boot
/// state) → trial → confirmed or rolled back. Every protocol is an adapter that asks it; a write,
/// commit, validation or activation carries the transfer's identity, and this value says whether
/// the host may carry it out. Pure: no IO, no clock (time is given).
public struct UpdateTransaction: Equatable, Sendable {
  /// How long a protocol's session holds the device after its last request: another protocol may
  /// begin a transfer (or reset the device) only once the holder has been quiet this long, or has
  /// gone. Which central or client of a protocol is its session is the adapter's business (a
  /// Nordic DFU session is its central's; SMP has one upload context, as Zephyr's img_mgmt).
  public static let leaseTimeout = Duration.seconds(30)

  /// The transfer under way: its identity and its journal as last written.
  public struct Transfer: Equatable, Sendable {
    public let id: TransferID
    /// A copy: what the adapter changes in it reaches the host only through a commit.
    public var journal: TransferJournal
  }

  /// Who holds the device: a protocol's session, and when it last did something.
  public struct Lease: Equatable, Sendable {
    public let owner: TransferOwner
    public var lastActivity: Duration
  }

  public private(set) var transfer: Transfer?
  public private(set) var lease: Lease?
  /// The loop's time, as the host was last told it.
  public var now: Duration = .zero
  private var lastSerial: UInt64 = 0

  /// At start: the transfer a journal describes gets an identity of its own owner, and no session
  /// holds it (its owner takes it up again by acting on it).
  public init(resuming journal: TransferJournal?) {
    if let journal { transfer = Transfer(id: nextID(journal.owner), journal: journal) }
  }

  /// The current transfer when `id` is its identity.
  public func current(_ id: TransferID) -> Transfer? {
    transfer.flatMap { $0.id == id ? $0 : nil }
  }

  /// The current transfer when `owner` began it (a session taking up its transfer again after a
  /// restart or a reconnection).
  public func current(of owner: TransferOwner) -> Transfer? {
    transfer.flatMap { $0.id.owner == owner ? $0 : nil }
  }

  /// True while another protocol's session holds the device.
  public func heldByAnother(_ owner: TransferOwner) -> Bool {
    guard let lease, now - lease.lastActivity < Self.leaseTimeout else { return false }
    return lease.owner != owner
  }

  /// True while any protocol's session holds the device: the device does not act on its own then.
  public var isHeld: Bool {
    guard let lease else { return false }
    return now - lease.lastActivity < Self.leaseTimeout
  }

  /// Whether `owner` may begin a new transfer of `slot` now.
  public func mayBegin(_ owner: TransferOwner, slot: SlotID, boot: BootState, running: SlotID)
    -> TransactionRefusal?
  {
    if heldByAnother(owner) { return .busy(lease?.owner ?? owner) }
    if ReceiverHost.unconfirmed(boot, running) { return .runningUnconfirmed }
    if slot == running { return .slotInUse(slot, "is the running slot") }
    if slot == boot.confirmed { return .slotInUse(slot, "holds the confirmed image") }
    return nil
  }

  /// A new transfer began (its slot prepared, its journal written): every earlier identity is stale.
  public mutating func began(_ journal: TransferJournal) -> TransferID {
    let id = nextID(journal.owner)
    transfer = Transfer(id: id, journal: journal)
    lease = Lease(owner: journal.owner, lastActivity: now)
    return id
  }

  /// Whether the transfer `id` may have `io` carried out now. `boot` and `running` are the boot
  /// state and the running slot: a slot that is running, confirmed or armed is never written.
  public func authorize(_ io: ReceiverIO, by id: TransferID, boot: BootState, running: SlotID)
    -> TransactionRefusal?
  {
    switch io {
    case .readRunning, .hashRunning, .decodeFrame, .confirm:
      // The running slot read, or the running trial's verdict: no transfer is touched.
      return nil
    case .prepare:
      return .outOfOrder("a transfer begins through begin, not as an IO of another")
    default:
      break
    }
    guard let transfer, transfer.id == id else { return .stale(id) }
    let journal = transfer.journal
    switch io {
    case .write(let slot, let offset, let bytes):
      if let refusal = writable(slot, journal, boot: boot, running: running) { return refusal }
      guard UInt64(offset) + UInt64(bytes.count) <= UInt64(journal.size) else {
        return .outOfOrder("bytes past the image's \(journal.size)")
      }
    case .checkWindow(let slot, let offset, let length):
      guard slot == journal.slot, UInt64(offset) + UInt64(length) <= UInt64(journal.size) else {
        return .outOfOrder("a check outside the image")
      }
    case .commit(let next):
      if let refusal = writable(next.slot, journal, boot: boot, running: running) { return refusal }
      guard Self.sameImage(next, journal), next.state == .receiving, next.committedOffset <= next.size,
        next.committedOffset >= journal.committedOffset
      else { return .outOfOrder("a commit that does not continue the transfer") }
    case .checkImage(let checked), .recordValidated(let checked):
      guard journal.state == .receiving, Self.sameImage(checked, journal),
        journal.committedOffset == journal.size, checked.committedOffset == journal.size
      else { return .outOfOrder("a validation before every byte is committed") }
      if let refusal = writable(journal.slot, journal, boot: boot, running: running) { return refusal }
    case .activate(let activated, _):
      guard journal.state == .validated, Self.sameImage(activated, journal), activated.crc32 == journal.crc32
      else { return .outOfOrder("an activation of a transfer that was not validated") }
    case .discard:
      return nil
    case .readRunning, .hashRunning, .decodeFrame, .confirm, .prepare:
      return nil
    }
    return nil
  }

  /// A slot write (or a commit) of `journal`'s transfer: only while receiving, only its own slot,
  /// and never a slot the boot state runs, confirms or has armed.
  private func writable(_ slot: SlotID, _ journal: TransferJournal, boot: BootState, running: SlotID)
    -> TransactionRefusal?
  {
    guard journal.state == .receiving else { return .sealed(journal.slot) }
    guard slot == journal.slot else { return .outOfOrder("slot \(slot) is not the transfer's") }
    if slot == running { return .slotInUse(slot, "is the running slot") }
    if slot == boot.confirmed { return .slotInUse(slot, "holds the confirmed image") }
    guard boot[slot].status == .empty else { return .slotInUse(slot, "holds an image \(boot[slot].status)") }
    return nil
  }

  /// The same slot, size and version (the CRC32 may be filled in as the last step of a transfer
  /// whose protocol sends none).
  static func sameImage(_ a: TransferJournal, _ b: TransferJournal) -> Bool {
    a.slot == b.slot && a.size == b.size && a.version == b.version && a.owner == b.owner
  }

  /// `io`, authorized for `id`, was carried out with `result`: the transfer follows it.
  public mutating func completed(_ io: ReceiverIO, by id: TransferID, _ result: IOResult) {
    guard var current = transfer, current.id == id else { return }
    touch(id.owner)
    switch (io, result) {
    case (.commit(let journal), .done), (.recordValidated(let journal), .done):
      current.journal = journal
      transfer = current
    case (.activate, .done), (.discard, _), (.activate, .image(.invalid)):
      // Activated (the journal is gone, the boot state holds the trial) or dropped.
      transfer = nil
    default:
      break
    }
  }

  /// `owner` acted: its session holds the device a while longer (unless another's does).
  public mutating func touch(_ owner: TransferOwner) {
    guard !heldByAnother(owner) else { return }
    lease = Lease(owner: owner, lastActivity: now)
  }

  /// `owner` takes up its transfer again (after a restart, or after its link came back): the lease
  /// is its own, unless another protocol's session holds the device.
  public mutating func resume(_ owner: TransferOwner) -> Transfer? {
    guard let transfer, transfer.id.owner == owner, !heldByAnother(owner) else { return nil }
    touch(owner)
    return transfer
  }

  /// `owner` takes over a validated transfer while no other session holds the device, to activate
  /// it (an SMP "test" of an image another protocol uploaded): a new identity, the old one stale.
  public mutating func claimValidated(_ owner: TransferOwner) -> Transfer? {
    guard var claimed = transfer, claimed.journal.state == .validated, !heldByAnother(owner) else {
      return nil
    }
    claimed.journal.owner = owner
    claimed = Transfer(id: nextID(owner), journal: claimed.journal)
    transfer = claimed
    touch(owner)
    return claimed
  }

  /// `owner`'s session ended (its central went): the device is free for another protocol.
  public mutating func release(_ owner: TransferOwner) {
    guard lease?.owner == owner else { return }
    lease = nil
  }

  /// The transfer is gone from storage (its prepare failed after removing the journal): forget it.
  public mutating func forget() { transfer = nil }

  private mutating func nextID(_ owner: TransferOwner) -> TransferID {
    lastSerial += 1
    return TransferID(owner: owner, serial: lastSerial)
  }
}
