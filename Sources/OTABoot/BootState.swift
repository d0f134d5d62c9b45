import OTAChecksum
import OTAWire

/// Which slot boots, which one (if any) is on trial with how many boots left, what each slot holds,
/// and how the last update ended. otad's boot stage, its daemon and `otad mark-good`/`mark-bad` read
/// and change it through `BootStateStore`; bootloader backends mirror it (`plan`).
///
/// Layout (144 bytes, little-endian; written to disk: never reorder, never renumber):
///     0 magic "OTAS"  4 format u8 = 3  5 confirmed slot u8  6 trial slot u8 (0xFF: none)
///     7 trial boots left u8  8 trial boots allowed u8
///     9 slot A: status u8, version (8), image size u32, image crc32 u32   26 slot B: the same
///     43 outcome u8  44 from version (8)  52 to version (8)  60 reason u8  61 attempts used u8
///     62 why the trial's last boot failed u8 (an outcome reason; 0 none)  63 reserved u8 = 0
///     64 slot A security counter u32  68 slot B security counter u32  72 security floor u32
///     76 slot A seal (32: the SHA-256 of the image's bytes as activated; all 0: none)
///     108 slot B seal (32)   140 CRC32 of bytes 0..<140
/// Format 2 (80 bytes: no seals, CRC32 of 0..<76 at 76) and format 1 (68 bytes: no security
/// counters either, CRC32 of 0..<64 at 64) are still read, without seals and counters 0.
public struct BootState: Equatable, Sendable {
  public static let recordName = "boot.state"
  public static let byteCount = 144
  static let formatTwoByteCount = 80
  static let formatOneByteCount = 68
  static let magic: [UInt8] = Array("OTAS".utf8)
  static let format: UInt8 = 3
  static let sealLength = 32
  static let noSlot: UInt8 = 0xFF

  /// What a slot holds, as far as booting goes. Written to disk: never renumber.
  public enum SlotStatus: UInt8, Equatable, Sendable, CustomStringConvertible {
    /// No image (never written, or being written).
    case empty = 0
    /// A good image: the confirmed one, or the previous confirmed one kept as a fallback.
    case good = 1
    /// An image armed for, or running, its trial.
    case trial = 2
    /// An image that failed its trial; never booted again.
    case bad = 3

    public var description: String {
      switch self {
      case .empty: "empty"
      case .good: "good"
      case .trial: "on trial"
      case .bad: "bad"
      }
    }
  }

  public struct Slot: Equatable, Sendable {
    public var status: SlotStatus
    public var version: Version
    /// The image's length and CRC32 as transferred (0 for a factory image: unknown).
    public var size: UInt32
    public var crc32: UInt32
    /// The image's MCUboot security counter (SEC_CNT TLV), 0 when it has none.
    public var securityCounter: UInt32
    /// The SHA-256 of the image's `size` bytes as the activation checked them (nil: none
    /// recorded, a factory image or one activated before seals). The boot stage boots a trial,
    /// and a trial is confirmed, only while its slot still matches it.
    public var seal: [UInt8]?

    public init(
      status: SlotStatus, version: Version = .zero, size: UInt32 = 0, crc32: UInt32 = 0,
      securityCounter: UInt32 = 0, seal: [UInt8]? = nil
    ) {
      self.seal = seal
      self.status = status
      self.version = version
      self.size = size
      self.crc32 = crc32
      self.securityCounter = securityCounter
    }

    public static let empty = Slot(status: .empty)
  }

  public struct Trial: Equatable, Sendable {
    public var slot: SlotID
    /// Boots the trial may still take. It counts down as each boot begins.
    public var attemptsLeft: UInt8
    public var attemptsAllowed: UInt8

    /// Why its last boot failed (the health check failed or timed out), if one did: the reason the
    /// rollback gives when its boots are spent.
    public var lastFailure: UpdateOutcome.Reason = .none

    /// True once the boot stage has started the trial image at least once.
    public var begun: Bool { attemptsLeft < attemptsAllowed }
    public var attemptsUsed: UInt8 { attemptsAllowed - attemptsLeft }
  }

  public var confirmed: SlotID
  public var trial: Trial?
  public var slots: SlotPair<Slot>
  public var outcome: UpdateOutcome
  /// The highest security counter of any image this device confirmed: an image with a lower one
  /// is refused (MCUboot's rollback protection). It only ever rises.
  public var securityFloor: UInt32
  /// Rebuilt from evidence that did not settle which slot was confirmed (`BootStateRecovery`):
  /// no slot may be written until an operator confirms the running one. Never written to disk: a
  /// provisional state is derived again at each start until it is confirmed and saved.
  public var provisional = false

  public init(
    confirmed: SlotID, trial: Trial? = nil, slots: SlotPair<Slot>, outcome: UpdateOutcome = .none,
    securityFloor: UInt32 = 0
  ) {
    self.confirmed = confirmed
    self.trial = trial
    self.slots = slots
    self.outcome = outcome
    self.securityFloor = securityFloor
  }

  /// A device that has never been updated: slot A holds `version`, confirmed; slot B is empty.
  public static func factory(version: Version, confirmed: SlotID = .a) -> BootState {
    var slots = SlotPair(repeating: Slot.empty)
    slots[confirmed] = Slot(status: .good, version: version)
    return BootState(confirmed: confirmed, slots: slots)
  }

  public subscript(slot: SlotID) -> Slot {
    get { slots[slot] }
    set { slots[slot] = newValue }
  }

  /// The slot that runs now as far as the state knows: the trial slot once its boot began, else the
  /// confirmed one. (A bootloader that reports what it booted has the last word: see `BootDecision`.)
  public var running: SlotID {
    if let trial, trial.begun { trial.slot } else { confirmed }
  }

  public var runningOnTrial: Bool { trial?.begun == true }

  /// What the bootloader must be told.
  public var plan: BootPlan {
    BootPlan(
      primary: confirmed,
      trial: trial.map { BootPlan.Trial(slot: $0.slot, attemptsLeft: Int($0.attemptsLeft)) })
  }

  // MARK: Verbs (mcuboot's small API: invalidate, set pending, confirm, and the two endings)

  /// Before a slot's first byte is overwritten it stops being bootable. The running and confirmed
  /// slots never do: asked for one of them (a state read from storage may say so where the caller's
  /// copy did not), nothing changes and the answer is false.
  @discardableResult
  public mutating func invalidate(_ slot: SlotID) -> Bool {
    guard slot != running, slot != confirmed else { return false }
    self[slot] = .empty
    if trial?.slot == slot { trial = nil }
    return true
  }

  /// Arms `slot`, holding `version`, for a trial of `attempts` boots; or, when `permanent`, makes it
  /// the confirmed slot at once (the update then counts as succeeded with no trial). The confirmed
  /// slot is activated by confirming it: asked for it, nothing changes and the answer is false.
  @discardableResult
  public mutating func activate(
    _ slot: SlotID, version: Version, size: UInt32, crc32: UInt32, securityCounter: UInt32 = 0,
    seal: [UInt8]? = nil, attempts: UInt8, permanent: Bool
  ) -> Bool {
    guard slot != confirmed else { return false }
    if permanent {
      let from = self[confirmed].version
      self[slot] = Slot(
        status: .good, version: version, size: size, crc32: crc32, securityCounter: securityCounter,
        seal: seal)
      confirmed = slot
      trial = nil
      securityFloor = max(securityFloor, securityCounter)
      outcome = UpdateOutcome(result: .succeeded, from: from, to: version, reason: .none, attemptsUsed: 0)
    } else {
      self[slot] = Slot(
        status: .trial, version: version, size: size, crc32: crc32, securityCounter: securityCounter,
        seal: seal)
      trial = Trial(slot: slot, attemptsLeft: max(1, attempts), attemptsAllowed: max(1, attempts))
    }
    return true
  }

  /// The boot stage starts one boot of the trial image.
  public mutating func beginAttempt() {
    guard var armed = trial, armed.attemptsLeft > 0 else { preconditionFailure("no trial boot left") }
    armed.attemptsLeft -= 1
    trial = armed
  }

  /// The trial image proved itself: it becomes the confirmed slot. Without a running trial nothing changes.
  public mutating func markGood() {
    guard let armed = trial, armed.begun else { return }
    let from = self[confirmed].version
    self[armed.slot].status = .good
    confirmed = armed.slot
    trial = nil
    securityFloor = max(securityFloor, self[armed.slot].securityCounter)
    outcome = UpdateOutcome(
      result: .succeeded, from: from, to: self[armed.slot].version, reason: .none,
      attemptsUsed: armed.attemptsUsed)
  }

  /// An operator confirms the slot a provisional (rebuilt) state keeps: the state becomes real.
  public mutating func confirmProvisional() { provisional = false }

  /// One boot of the trial failed (`reason`): with boots left it is remembered and the next boot tries
  /// again; with none left the trial is marked bad.
  public mutating func failBoot(_ reason: UpdateOutcome.Reason) {
    guard var armed = trial else { return }
    if armed.attemptsLeft == 0 {
      markBad(reason)
    } else {
      armed.lastFailure = reason
      trial = armed
    }
  }

  /// The trial's boots are spent without a verdict: it is marked bad for its last failure, or
  /// "did not start" when no boot of it even reported one.
  public mutating func rollBackSpentTrial() {
    guard let armed = trial else { return }
    markBad(armed.lastFailure == .none ? .didNotStart : armed.lastFailure)
  }

  /// The trial failed (`reason`): its slot is bad and the confirmed slot runs again.
  public mutating func markBad(_ reason: UpdateOutcome.Reason) {
    guard let armed = trial else { return }
    self[armed.slot].status = .bad
    trial = nil
    outcome = UpdateOutcome(
      result: .rolledBack, from: self[confirmed].version, to: self[armed.slot].version, reason: reason,
      attemptsUsed: armed.attemptsUsed)
  }

  // MARK: Bytes

  public init(bytes: [UInt8]) throws(WireError) {
    let formats: [Int: UInt8] = [
      Self.byteCount: Self.format, Self.formatTwoByteCount: 2, Self.formatOneByteCount: 1,
    ]
    guard let expectedFormat = formats[bytes.count] else {
      throw .malformed("boot state is \(bytes.count) bytes, expected \(Self.byteCount)")
    }
    var reader = ByteReader(bytes)
    guard Array(try reader.readBytes(4)) == Self.magic else { throw .malformed("boot state magic") }
    let format = try reader.readU8()
    guard format == expectedFormat else {
      throw .malformed("boot state format \(format) in \(bytes.count) bytes")
    }
    guard let confirmed = SlotID(rawValue: try reader.readU8()) else {
      throw .malformed("boot state confirmed slot")
    }
    let rawTrial = try reader.readU8()
    let left = try reader.readU8()
    let allowed = try reader.readU8()
    var slots = try SlotPair.bySlot { _ throws(WireError) in
      guard let status = SlotStatus(rawValue: try reader.readU8()) else {
        throw .malformed("boot state slot status")
      }
      let version = try Version(from: &reader)
      return Slot(status: status, version: version, size: try reader.readU32(), crc32: try reader.readU32())
    }
    guard let result = UpdateOutcome.Result(rawValue: try reader.readU8()) else {
      throw .malformed("boot state outcome")
    }
    let from = try Version(from: &reader)
    let to = try Version(from: &reader)
    guard let reason = UpdateOutcome.Reason(rawValue: try reader.readU8()) else {
      throw .malformed("boot state outcome reason")
    }
    let attemptsUsed = try reader.readU8()
    guard let lastFailure = UpdateOutcome.Reason(rawValue: try reader.readU8()) else {
      throw .malformed("boot state trial failure")
    }
    guard try reader.readU8() == 0 else { throw .malformed("boot state reserved byte") }
    securityFloor = 0
    if format >= 2 {
      for slot in SlotID.allCases { slots[slot].securityCounter = try reader.readU32() }
      securityFloor = try reader.readU32()
    }
    if format >= 3 {
      for slot in SlotID.allCases {
        let seal = Array(try reader.readBytes(Self.sealLength))
        slots[slot].seal = seal.allSatisfy { $0 == 0 } ? nil : seal
      }
    }
    let checksummed = bytes.count - 4
    guard try reader.readU32() == CRC32.checksum(bytes[0..<checksummed]) else {
      throw .malformed("boot state checksum")
    }
    self.confirmed = confirmed
    self.slots = slots
    outcome = UpdateOutcome(result: result, from: from, to: to, reason: reason, attemptsUsed: attemptsUsed)
    if rawTrial == Self.noSlot {
      guard lastFailure == .none else { throw .malformed("boot state trial failure without a trial") }
      trial = nil
    } else {
      guard let slot = SlotID(rawValue: rawTrial), slot != confirmed, allowed > 0, left <= allowed,
        slots[slot].status == .trial
      else { throw .malformed("boot state trial") }
      trial = Trial(slot: slot, attemptsLeft: left, attemptsAllowed: allowed, lastFailure: lastFailure)
    }
    guard self[confirmed].status == .good else {
      throw .malformed("boot state confirms a slot without a good image")
    }
  }

  public var encoded: [UInt8] {
    var bytes = Self.magic
    bytes.appendU8(Self.format)
    bytes.appendU8(confirmed.rawValue)
    bytes.appendU8(trial?.slot.rawValue ?? Self.noSlot)
    bytes.appendU8(trial?.attemptsLeft ?? 0)
    bytes.appendU8(trial?.attemptsAllowed ?? 0)
    for slot in slots.values {
      bytes.appendU8(slot.status.rawValue)
      slot.version.append(to: &bytes)
      bytes.appendU32(slot.size)
      bytes.appendU32(slot.crc32)
    }
    bytes.appendU8(outcome.result.rawValue)
    outcome.from.append(to: &bytes)
    outcome.to.append(to: &bytes)
    bytes.appendU8(outcome.reason.rawValue)
    bytes.appendU8(outcome.attemptsUsed)
    bytes.appendU8(trial?.lastFailure.rawValue ?? 0)
    bytes.appendU8(0)
    for slot in slots.values { bytes.appendU32(slot.securityCounter) }
    bytes.appendU32(securityFloor)
    for slot in slots.values {
      let seal = slot.seal.flatMap { $0.count == Self.sealLength ? $0 : nil }
      bytes.append(contentsOf: seal ?? [UInt8](repeating: 0, count: Self.sealLength))
    }
    bytes.appendU32(CRC32.checksum(bytes))
    return bytes
  }
}
