import OTAStorage
import OTATrust
import OTAWire

/// Everything a device can still see when its boot state is gone, damaged or contradicted by the
/// bootloader: RAUC's and mcuboot's rule is to derive the truth from what is on the medium rather
/// than to trust a default.
public struct RecoveryEvidence: Equatable, Sendable {
  /// Why the boot state is not used.
  public enum Record: Equatable, Sendable {
    /// No copy exists: a factory device, or one whose copies were deleted.
    case missing
    /// Every copy failed its checks (moved aside).
    case damaged
    /// A copy decodes but the bootloader contradicts it (it is older than the bootloader's pointer).
    case contradicted(BootState, why: String)
  }

  public var record: Record
  public var pointer: BootPointer
  /// The transfer journal, when one decodes: it names the slot being written, never the good one.
  public var journal: JournalEvidence?
  public var slots: SlotPair<SlotEvidence>
  /// A damaged copy of the boot state was moved aside now or earlier: the device was in use.
  public var damagedRecordsSeen: Bool
  /// Slots whose first bytes are all erased (0x00 or 0xFF): nothing was ever written there.
  public var blank = SlotPair(repeating: false)
  /// An earlier rebuild was provisional and nobody confirmed it yet (`BootStateStore.provisionalName`):
  /// the bootloader's pointer may since have been written from that very guess, so it settles nothing.
  public var unconfirmedRebuild = false
  public var factoryVersion: Version

  public init(
    record: Record, pointer: BootPointer, journal: JournalEvidence?, slots: SlotPair<SlotEvidence>,
    damagedRecordsSeen: Bool, factoryVersion: Version
  ) {
    self.record = record
    self.pointer = pointer
    self.journal = journal
    self.slots = slots
    self.damagedRecordsSeen = damagedRecordsSeen
    self.factoryVersion = factoryVersion
  }

  public subscript(slot: SlotID) -> SlotEvidence { slots[slot] }

  /// Nothing says this device was ever updated: no record, no damaged one, no verified image in
  /// slot B, no bootloader pointer beyond slot A but to a blank slot, at most a journal of a first transfer into slot B
  /// (a factory device saves no boot state before its first activation).
  public var looksFactory: Bool {
    record == .missing && (journal == nil || journal?.slot == .b) && !damagedRecordsSeen
      && slots.b.report == nil
      && [pointer.primary, pointer.trial, pointer.booted].allSatisfy { pointed in
        pointed.map { $0 == .a || blank[$0] } ?? true
      }
  }
}

/// What a transfer journal says, as evidence: the slot it writes, and a line for the log.
public struct JournalEvidence: Equatable, Sendable {
  public var slot: SlotID
  public var summary: String

  public init(slot: SlotID, summary: String) {
    self.slot = slot
    self.summary = summary
  }
}

/// A boot state rebuilt from evidence, with the reason for each choice. The slot kept as confirmed
/// is never written; when the evidence does not settle which slot was the confirmed one, the state
/// is provisional: no slot is written until the kept slot proves itself as a trial does (its health
/// check, or otad coming up on it with `confirm = "auto"`), a paired central confirms it, or
/// `otad mark-good` does.
public struct BootStateRecovery: Equatable, Sendable {
  /// What decided which slot is kept, strongest first.
  public enum Basis: String, Equatable, Sendable {
    case factory = "nothing was ever written: a factory device"
    case primaryPointer = "the bootloader's primary slot"
    case journalOverUnfinishedImage =
      "the transfer journal writes the other slot, and what that slot holds fails its check"
    case journal = "the transfer journal writes the other slot"
    case bootedSlot = "the slot the bootloader started"
    case onlyVerifiedImage = "the only slot holding a verified image"
    case noEvidence = "no evidence at all: slot A, as on a factory device"
  }

  public var state: BootState
  public var kept: SlotID
  public var basis: Basis
  /// The evidence settles the confirmed slot: the state may be saved and updates go on.
  public var certain: Bool
  /// What was found and decided, one line each, for the log and `otad status`.
  public var findings: [String]

  /// The rules, in order (docs/BOOT.md draws them as a table):
  /// 1. A factory device (nothing written, nothing pointed at but A) keeps slot A.
  /// 2. The bootloader's primary slot is kept: the bootloader only ever boots it outside a trial.
  ///    A journal naming that very slot is older than its activation and is ignored. A primary slot
  ///    that is blank is no evidence (a pointer that otad did not write, such as a boot script's
  ///    defaults saved): the rules below decide.
  /// 3. Else a journal's slot J is the one being written: the other one is kept. For certain when J
  ///    holds an MCUboot image that fails its check (the unfinished transfer itself): J was never
  ///    confirmed since that transfer began, since only a complete image is activated, so even an old
  ///    copy of the journal tells the truth. Otherwise provisionally (a journal may be an old copy;
  ///    the started slot when the bootloader started the journal's).
  /// 4. Else the slot the bootloader started is kept, provisionally (it may be a trial).
  /// 5. Else the only slot holding a verified image is kept, provisionally; else slot A, provisionally.
  /// The kept slot is `good` with what its image says of itself (an MCUboot image's version, length,
  /// CRC and security counter; a raw image's version is unknown, 0.0.0, except in slot A of a
  /// device that never recorded a boot state, where it is the factory version).
  /// The other slot is `empty`: whatever it holds is no longer trusted, and a journal over it resumes.
  /// No trial survives: a trial whose state was lost is not booted again.
  public static func recover(_ evidence: RecoveryEvidence) -> BootStateRecovery {
    var findings: [String] = []
    switch evidence.record {
    case .missing: findings.append("no boot state on record")
    case .damaged: findings.append("every copy of the boot state is damaged")
    case .contradicted(_, let why): findings.append("the boot state is contradicted: \(why)")
    }
    findings.append("bootloader: \(evidence.pointer)")
    if let journal = evidence.journal {
      findings.append("journal: \(journal.summary)")
    }
    for slot in SlotID.allCases { findings.append("slot \(slot): \(evidence[slot])") }

    var (kept, basis, certain) = choose(evidence, &findings)
    // The pointer may have been written from an earlier provisional guess; the journal rule
    // does not read it.
    if evidence.unconfirmedRebuild, certain, basis != .factory, basis != .journalOverUnfinishedImage {
      findings.append("an earlier rebuild kept slot \(kept) provisionally and nobody has confirmed it")
      certain = false
    }
    let image = evidence[kept]
    var slot = BootState.Slot(status: .good)
    switch image {
    case .verified(let report):
      slot.version = report.version
      slot.size = UInt32(clamping: report.size)
      slot.crc32 = report.crc32
      slot.securityCounter = report.securityCounter
    case .unverifiable:
      // Raw bytes say nothing of their version: on a device with no boot state ever, slot A
      // holds the factory image; anywhere else the version is unknown.
      let neverRecorded = evidence.record == .missing && !evidence.damagedRecordsSeen && kept == .a
      slot.version = neverRecorded ? evidence.factoryVersion : .zero
      if basis != .factory {
        findings.append(
          neverRecorded
            ? "slot A holds no MCUboot header: taken as the factory image \(evidence.factoryVersion)"
            : "slot \(kept) holds no MCUboot header: its version is unknown")
      }
    case .invalid(let problem):
      findings.append("slot \(kept) is kept though its image fails its check (\(problem)): reinstall it")
    case .unreadable(let why):
      findings.append("slot \(kept) is kept though it cannot be read (\(why)): check the storage")
    }
    if case .contradicted(let previous, _) = evidence.record, previous.confirmed == kept,
      previous[kept].status == .good, image.report.map({ $0.version == previous[kept].version }) ?? true
    {
      // The old copy confirmed this very slot: what it recorded (a raw image's version) still holds.
      slot = previous[kept]
    }
    var slots = SlotPair(repeating: BootState.Slot.empty)
    slots[kept] = slot
    var previousFloor: UInt32 = 0
    var outcome = UpdateOutcome.none
    if case .contradicted(let previous, _) = evidence.record {
      previousFloor = previous.securityFloor
      outcome = previous.outcome
    }
    var state = BootState(
      confirmed: kept, slots: slots, outcome: outcome,
      securityFloor: max(previousFloor, slot.securityCounter))
    state.provisional = !certain
    findings.append(
      "kept slot \(kept) (\(basis.rawValue))"
        + (certain
          ? "; slot \(kept.other) may be written"
          : "; provisional: no slot is written until slot \(kept) is confirmed (as a trial is, or by "
            + "`otad mark-good`)"))
    return BootStateRecovery(state: state, kept: kept, basis: basis, certain: certain, findings: findings)
  }

  private static func choose(_ evidence: RecoveryEvidence, _ findings: inout [String])
    -> (SlotID, Basis, certain: Bool)
  {
    if evidence.looksFactory { return (.a, .factory, true) }
    if let primary = evidence.pointer.primary, evidence.blank[primary] {
      findings.append(
        "the bootloader's primary slot \(primary) is blank: otad never pointed it there, so it settles nothing"
      )
    } else if let primary = evidence.pointer.primary {
      if let journal = evidence.journal, journal.slot == primary {
        findings.append(
          "the journal writes slot \(primary), which the bootloader boots: the journal is stale")
      }
      return (primary, .primaryPointer, true)
    }
    if let journal = evidence.journal {
      if let booted = evidence.pointer.booted, booted == journal.slot {
        // One of the two is stale; the slot that runs is kept.
        findings.append("the bootloader started slot \(booted), which the journal writes")
        return (booted, .bootedSlot, false)
      }
      if case .invalid(let problem) = evidence[journal.slot], problem.isIncompleteBytes,
        evidence[journal.slot.other].couldBeGood
      {
        findings.append(
          "slot \(journal.slot) holds an unfinished image: it has not been confirmed since that transfer began"
        )
        return (journal.slot.other, .journalOverUnfinishedImage, true)
      }
      // A journal may be an old copy: without the bootloader's word it settles nothing.
      return (journal.slot.other, .journal, false)
    }
    if let booted = evidence.pointer.booted, evidence.pointer.trial != booted {
      return (booted, .bootedSlot, false)
    }
    let verified = SlotID.allCases.filter { evidence[$0].report != nil }
    if verified.count == 1 { return (verified[0], .onlyVerifiedImage, false) }
    return (.a, .noEvidence, false)
  }

  /// Why a decodable state cannot be what the device last wrote, or nil: the bootloader's primary
  /// slot, or the slot it started, is one the state calls empty. (The state is always saved before
  /// the pointer moves, and a slot is emptied only when it is neither confirmed nor running; a stale
  /// copy shows exactly this.) An armed trial's slot is not asked: PREPARE may drop a trial that
  /// never began before the bootloader hears of it, and writing over it loses nothing good. Nor is
  /// a primary slot that `isBlank` says holds nothing: otad never points the bootloader at such a
  /// slot, so that pointer is someone else's (a boot script's defaults), not a newer state's.
  public static func contradiction(
    _ state: BootState, _ pointer: BootPointer, isBlank: (SlotID) -> Bool = { _ in false }
  ) -> String? {
    for (role, slot) in [("primary", pointer.primary), ("started", pointer.booted)] {
      if let slot, state[slot].status == .empty, role != "primary" || !isBlank(slot) {
        return "the bootloader's \(role) slot is \(slot), which the boot state calls empty"
      }
    }
    return nil
  }
}

extension ImageProblem {
  /// The bytes are not a whole image (a transfer that did not finish), as opposed to a whole image
  /// that this device's policy refuses now (a signature by a key no longer trusted, a downgrade),
  /// which may well be the image it last confirmed.
  var isIncompleteBytes: Bool {
    switch self {
    case .malformed, .hashMissing, .hashMismatch, .sizeMismatch, .crcMismatch: true
    case .versionMismatch, .signatureInvalid, .downgrade, .securityCounterBackwards, .cannotDecrypt: false
    }
  }
}

extension SlotEvidence {
  /// The slot may hold a good image: one that verifies, or raw bytes that cannot be judged.
  var couldBeGood: Bool {
    switch self {
    case .verified, .unverifiable: true
    case .invalid, .unreadable: false
    }
  }
}
