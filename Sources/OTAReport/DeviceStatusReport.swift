/// What `otad status` shows, as one value: `--json` encodes it (the field names are documented in
/// docs/OTAD.md), the text renders it (`DeviceStatusReport+Text`). Plain values, no IO: the daemon
/// reads it from the device's storage without changing anything; otactl and ota-lab only read it.
public struct DeviceStatusReport: Codable, Equatable, Sendable {
  public struct Slot: Codable, Equatable, Sendable {
    public init(
      slot: String, running: Bool, confirmed: Bool, status: String, version: String?, capacity: UInt64,
      path: String, securityCounter: UInt32
    ) {
      self.slot = slot
      self.running = running
      self.confirmed = confirmed
      self.status = status
      self.version = version
      self.capacity = capacity
      self.path = path
      self.securityCounter = securityCounter
    }

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
    public init(slot: String, attemptsLeft: UInt8, attemptsAllowed: UInt8, begun: Bool) {
      self.slot = slot
      self.attemptsLeft = attemptsLeft
      self.attemptsAllowed = attemptsAllowed
      self.begun = begun
    }

    public var slot: String
    public var attemptsLeft: UInt8
    public var attemptsAllowed: UInt8
    public var begun: Bool

    public var attemptsUsed: UInt8 { attemptsAllowed - min(attemptsLeft, attemptsAllowed) }
  }

  public struct Outcome: Codable, Equatable, Sendable {
    public init(result: String, from: String, to: String, reason: String, attemptsUsed: UInt8) {
      self.result = result
      self.from = from
      self.to = to
      self.reason = reason
      self.attemptsUsed = attemptsUsed
    }

    /// none, succeeded or rolled back.
    public var result: String
    public var from: String
    public var to: String
    public var reason: String
    public var attemptsUsed: UInt8
  }

  /// A boot state rebuilt from evidence.
  public struct Rebuilt: Codable, Equatable, Sendable {
    public init(kept: String, basis: String, certain: Bool, findings: [String]) {
      self.kept = kept
      self.basis = basis
      self.certain = certain
      self.findings = findings
    }

    public var kept: String
    public var basis: String
    public var certain: Bool
    public var findings: [String]
  }

  public struct Journal: Codable, Equatable, Sendable {
    public init(state: String, slot: String, size: UInt32, crc32: String, version: String, committed: UInt32)
    {
      self.state = state
      self.slot = slot
      self.size = size
      self.crc32 = crc32
      self.version = version
      self.committed = committed
    }

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
  /// The PEM file of the device's key for encrypted images; nil (null): encrypted images are refused.
  public var decryptionKey: String?
  public var transfer: Transfer
  /// The device's say over activations; nil (absent) when not read.
  public var activation: ActivationStatus?

  public init(
    running: String, confirmed: String, onTrial: Bool, bootloader: String, slots: [Slot], trial: Trial?,
    lastOutcome: Outcome, bootState: String, runningImage: String?, provisional: Bool, rebuilt: Rebuilt?,
    securityFloor: UInt32, signaturesRequired: Bool, trustedKeys: [String], downgradesAllowed: Bool,
    transfer: Transfer, decryptionKey: String? = nil
  ) {
    self.decryptionKey = decryptionKey
    self.running = running
    self.confirmed = confirmed
    self.onTrial = onTrial
    self.bootloader = bootloader
    self.slots = slots
    self.trial = trial
    self.lastOutcome = lastOutcome
    self.bootState = bootState
    self.runningImage = runningImage
    self.provisional = provisional
    self.rebuilt = rebuilt
    self.securityFloor = securityFloor
    self.signaturesRequired = signaturesRequired
    self.trustedKeys = trustedKeys
    self.downgradesAllowed = downgradesAllowed
    self.transfer = transfer
  }

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
    try container.encode(decryptionKey, forKey: .decryptionKey)  // null, not absent
    try container.encode(transfer, forKey: .transfer)
    try container.encodeIfPresent(activation, forKey: .activation)
  }
}
