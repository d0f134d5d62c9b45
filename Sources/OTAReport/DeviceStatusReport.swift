import OTABoot
import OTAEngine
import OTAStorage
import OTATrust
import OTAWire

/// What `otad status` shows, as one value: `--json` encodes it (the field names are documented in
/// docs/OTAD.md), the text renders it (`DeviceStatusReport+Text`). Read from the device's storage
/// without changing anything.
public struct DeviceStatusReport: Codable, Equatable, Sendable {
  public struct Slot: Codable, Equatable, Sendable {
    public var slot: String
    public var running: Bool
    public var confirmed: Bool
    /// good, on trial, bad, or empty.
    public var status: String
    /// Nil (null) for an empty slot.
    public var version: String?
    public var capacity: UInt64
    public var path: String
    public var securityCounter: UInt32

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(slot, forKey: .slot)
      try container.encode(running, forKey: .running)
      try container.encode(confirmed, forKey: .confirmed)
      try container.encode(status, forKey: .status)
      try container.encode(version, forKey: .version)  // null, not absent, for an empty slot
      try container.encode(capacity, forKey: .capacity)
      try container.encode(path, forKey: .path)
      try container.encode(securityCounter, forKey: .securityCounter)
    }
  }

  public struct Trial: Codable, Equatable, Sendable {
    public var slot: String
    public var attemptsLeft: UInt8
    public var attemptsAllowed: UInt8
    public var begun: Bool

    public var attemptsUsed: UInt8 { attemptsAllowed - min(attemptsLeft, attemptsAllowed) }
  }

  public struct Outcome: Codable, Equatable, Sendable {
    /// none, succeeded or rolled back.
    public var result: String
    public var from: String
    public var to: String
    public var reason: String
    public var attemptsUsed: UInt8
  }

  /// A boot state rebuilt from evidence.
  public struct Rebuilt: Codable, Equatable, Sendable {
    public var kept: String
    public var basis: String
    public var certain: Bool
    public var findings: [String]
  }

  public struct Journal: Codable, Equatable, Sendable {
    public var state: String
    public var slot: String
    public var size: UInt32
    /// Eight lower-case hex digits.
    public var crc32: String
    public var version: String
    public var committed: UInt32

    /// The committed share of the image, in whole percent.
    public var percent: Int { size > 0 ? Int(UInt64(committed) * 100 / UInt64(size)) : 0 }
  }

  /// The transfer journal: its fields, or `missing` / `damaged` as a string.
  public enum Transfer: Codable, Equatable, Sendable {
    case journal(Journal)
    case missing
    case damaged

    public init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      if let word = try? container.decode(String.self) {
        switch word {
        case "missing": self = .missing
        case "damaged": self = .damaged
        default:
          throw DecodingError.dataCorruptedError(
            in: container, debugDescription: "transfer '\(word)': missing, damaged or a journal")
        }
      } else {
        self = .journal(try container.decode(Journal.self))
      }
    }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.singleValueContainer()
      switch self {
      case .journal(let journal): try container.encode(journal)
      case .missing: try container.encode("missing")
      case .damaged: try container.encode("damaged")
      }
    }
  }

  public var running: String
  public var confirmed: String
  public var onTrial: Bool
  public var bootloader: String
  public var slots: [Slot]
  public var trial: Trial?
  public var lastOutcome: Outcome
  /// present, missing or damaged: the boot state record as stored.
  public var bootState: String
  /// The running slot's image checked against what was installed; nil (null) without slots, or when
  /// not checked (`statusReport(checkingImage: false)`).
  public var runningImage: String?
  public var provisional: Bool
  public var rebuilt: Rebuilt?
  public var securityFloor: UInt32
  public var signaturesRequired: Bool
  /// The PEM files of the keys images must be signed by (empty: no signature required).
  public var trustedKeys: [String]
  public var downgradesAllowed: Bool
  public var transfer: Transfer

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(running, forKey: .running)
    try container.encode(confirmed, forKey: .confirmed)
    try container.encode(onTrial, forKey: .onTrial)
    try container.encode(bootloader, forKey: .bootloader)
    try container.encode(slots, forKey: .slots)
    try container.encodeIfPresent(trial, forKey: .trial)  // only while there is one
    try container.encode(lastOutcome, forKey: .lastOutcome)
    try container.encode(bootState, forKey: .bootState)
    try container.encode(runningImage, forKey: .runningImage)  // null, not absent
    try container.encode(provisional, forKey: .provisional)
    try container.encodeIfPresent(rebuilt, forKey: .rebuilt)  // only for a rebuilt state
    try container.encode(securityFloor, forKey: .securityFloor)
    try container.encode(signaturesRequired, forKey: .signaturesRequired)
    try container.encode(trustedKeys, forKey: .trustedKeys)
    try container.encode(downgradesAllowed, forKey: .downgradesAllowed)
    try container.encode(transfer, forKey: .transfer)
  }
}

extension DeviceStatusReport {
  /// The report from what storage says (`status`), the boot state as the daemon would act on it
  /// (`reading`, rebuilt from evidence when the record is unusable) and the running image's check.
  public init(
    status: DeviceStatus, reading: BootStateReading, runningImage: InstalledImageCheck?, layout: DeviceLayout,
    configuration: DaemonConfiguration
  ) {
    let state = reading.state
    running = "\(state.running)"
    confirmed = "\(state.confirmed)"
    onTrial = state.runningOnTrial
    bootloader = configuration.boot.backend.rawValue
    slots = SlotID.allCases.map { slot in
      let content = state[slot]
      return Slot(
        slot: "\(slot)", running: state.running == slot, confirmed: state.confirmed == slot,
        status: "\(content.status)", version: content.status == .empty ? nil : "\(content.version)",
        capacity: status.slotCapacities[slot], path: layout.slots[slot],
        securityCounter: content.securityCounter)
    }
    trial = state.trial.map {
      Trial(
        slot: "\($0.slot)", attemptsLeft: $0.attemptsLeft, attemptsAllowed: $0.attemptsAllowed,
        begun: $0.begun)
    }
    let outcome = state.outcome
    lastOutcome = Outcome(
      result: "\(outcome.result)", from: "\(outcome.from)", to: "\(outcome.to)", reason: "\(outcome.reason)",
      attemptsUsed: outcome.attemptsUsed)
    bootState = status.boot.summary
    self.runningImage = runningImage.map { "\($0)" }
    provisional = state.provisional
    rebuilt = reading.recovery.flatMap { recovery in
      recovery.basis == .factory
        ? nil
        : Rebuilt(
          kept: "\(recovery.kept)", basis: recovery.basis.rawValue, certain: recovery.certain,
          findings: recovery.findings)
    }
    securityFloor = state.securityFloor
    signaturesRequired = !configuration.trust.keyFiles.isEmpty
    trustedKeys = configuration.trust.keyFiles
    downgradesAllowed = configuration.trust.allowDowngrade
    switch status.transfer {
    case .missing: transfer = .missing
    case .damaged: transfer = .damaged
    case .present(let journal):
      transfer = .journal(
        Journal(
          state: "\(journal.state)", slot: "\(journal.slot)", size: journal.size,
          crc32: Self.hex(journal.crc32), version: "\(journal.version)", committed: journal.committedOffset))
    }
  }

  /// Eight lower-case hex digits, zero-padded.
  static func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
  }
}

extension Daemon {
  /// What `otad status` shows; nothing is written. `checkingImage` false leaves the running image
  /// unchecked (`runningImage` null): a watcher that asks several times a second (ota-lab) does not
  /// hash the whole running slot each time.
  public func statusReport(checkingImage: Bool = true) throws -> DeviceStatusReport {
    let status = try DeviceStatus.read(storage)
    let reading = try control.inspect()
    var runningImage: InstalledImageCheck?
    if checkingImage {
      do {
        runningImage = try control.checkInstalledImage(reading.state.running, in: reading.state)
      } catch {
        runningImage = .rotten("slot \(reading.state.running) cannot be read: \(error)")
      }
    }
    return DeviceStatusReport(
      status: status, reading: reading, runningImage: runningImage, layout: layout,
      configuration: configuration)
  }
}
