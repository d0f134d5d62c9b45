import OTAReport

/// Everything the page draws, at one moment, as one JSON value: otad's status report, its own
/// events (from its trace), the push under way as otactl reports it, the link's settings. The page
/// asks for it a few times a second; it is built at most that often, never per chunk.
public struct LabSnapshot: Codable, Equatable, Sendable {
  public struct Link: Codable, Equatable, Sendable {
    public var mtu: Int
    public var intervalMilliseconds: Double
    public var loss: Double
    /// As otactl's --link takes it.
    public var conditions: String

    public init(mtu: Int, intervalMilliseconds: Double, loss: Double, conditions: String) {
      self.mtu = mtu
      self.intervalMilliseconds = intervalMilliseconds
      self.loss = loss
      self.conditions = conditions
    }
  }

  /// The boot side, from the status report and the last boot decision otad traced.
  public struct Boot: Codable, Equatable, Sendable {
    public var running: String?
    public var confirmed: String?
    public var trialSlot: String?
    public var bootsLeft: Int?
    public var bootsAllowed: Int?
    public var lastDecision: String?
    public var lastDecisionSlot: String?
    public var outcome: String?
    public var outcomeReason: String?
    public var outcomeFrom: String?
    public var outcomeTo: String?

    public init(
      running: String? = nil, confirmed: String? = nil, trialSlot: String? = nil, bootsLeft: Int? = nil,
      bootsAllowed: Int? = nil, lastDecision: String? = nil, lastDecisionSlot: String? = nil,
      outcome: String? = nil, outcomeReason: String? = nil, outcomeFrom: String? = nil,
      outcomeTo: String? = nil
    ) {
      self.running = running
      self.confirmed = confirmed
      self.trialSlot = trialSlot
      self.bootsLeft = bootsLeft
      self.bootsAllowed = bootsAllowed
      self.lastDecision = lastDecision
      self.lastDecisionSlot = lastDecisionSlot
      self.outcome = outcome
      self.outcomeReason = outcomeReason
      self.outcomeFrom = outcomeFrom
      self.outcomeTo = outcomeTo
    }
  }

  /// The encrypted sample, once a slot holds it: its first payload bytes as they travel (the image
  /// file, the air: ciphertext) and as the slot holds them (decrypted after the device's checks).
  public struct Encryption: Codable, Equatable, Sendable {
    public var slot: String
    /// Hex.
    public var onAir: String
    /// Hex.
    public var inSlot: String
    /// The slot's bytes as text where printable, `.` elsewhere: the app's script shows through.
    public var inSlotText: String

    public init(slot: String, onAir: [UInt8], inSlot: [UInt8]) {
      self.slot = slot
      self.onAir = Self.hex(onAir)
      self.inSlot = Self.hex(inSlot)
      inSlotText = String(inSlot.map { (0x20..<0x7f).contains($0) ? Character(UnicodeScalar($0)) : "." })
    }

    static func hex(_ bytes: [UInt8]) -> String {
      let digits = Array("0123456789abcdef")
      return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] })
    }
  }

  /// The bootloader's side of the boot pointer: its backend, its variables as it stores them
  /// (name, value), and the pointer they make (primary, trial). Under a real bootloader (U-Boot:
  /// `UBootXray`) also its last choices, whether it is choosing now, and how its view and otad's stand.
  public struct BootVariables: Codable, Equatable, Sendable {
    public var backend: String
    public var variables: [[String]]
    public var pointer: String
    /// Drawn between a variable's name and its value: "→" (a link and its target) when nil, "=".
    public var separator: String?
    /// The bootloader's last boots, oldest first, one sentence each.
    public var choices: [String]?
    /// Set while the board is powered on and the bootloader chooses.
    public var choosing: String?
    /// How the bootloader's view and otad's stand now.
    public var caption: String?
    /// What the lab saw change on the bootloader's side, newest last (`UBootHistory`).
    public var history: [String]?

    public init(backend: String, variables: [[String]], pointer: String) {
      self.backend = backend
      self.variables = variables
      self.pointer = pointer
    }
  }

  /// Seconds since the lab started.
  public var at: Double
  public var otadRunning: Bool
  /// Times the device was started again (power cuts and its own restarts after ACTIVATE).
  public var powerCuts: Int
  public var status: DeviceStatusReport?
  public var statusError: String?
  public var boot: Boot
  public var slot: SlotPicture?
  public var push: PushProgress?
  public var link: Link
  /// The device's last events, newest last: [seconds since the lab started, name, detail].
  public var events: [[String]]
  /// What the lab was asked to do, newest last.
  public var actions: [String]
  public var encryption: Encryption?
  /// The A/B cycle's diagram: the slot an update is about and its stage (nil while otad's status
  /// is unread).
  public var cycle: UpdateCycle?
  /// The exercises in the page's order, each ready, locked (with what to do first) or done.
  public var exercises: [LabExercise] = []
  /// The student's name in class mode; nil for the lab alone.
  public var seat: String?
  /// Set while a reset makes the device again (under U-Boot a new board and its first boot: seconds).
  public var resetting: String?
  public var bootVariables: BootVariables?
  /// The device's say over activations: locks, the kept activation and what holds it, the owner's
  /// answer (nil while otad's status is unread).
  public var say: DeviceSay?

  public static let eventLimit = 40

  public init(
    at: Double, startedAt: UInt64, otadRunning: Bool, powerCuts: Int, status: DeviceStatusReport?,
    statusError: String?, deviceEvents digest: DeviceEventDigest, push: PushProgress?, link: Link,
    windowCapacity: Int,
    actions: [String], encryption: Encryption? = nil
  ) {
    self.encryption = encryption
    cycle = status.map(UpdateCycle.init)
    say = status?.activation.map(DeviceSay.init)
    self.at = at
    self.otadRunning = otadRunning
    self.powerCuts = powerCuts
    self.status = status
    self.statusError = statusError
    self.push = push
    self.link = link
    self.actions = actions
    let deviceEvents = digest.events
    let decision = deviceEvents.last { $0.name == "boot decision" }
    boot = Boot(
      running: status?.running, confirmed: status?.confirmed, trialSlot: status?.trial?.slot,
      bootsLeft: status?.trial.map { Int($0.attemptsLeft) },
      bootsAllowed: status?.trial.map { Int($0.attemptsAllowed) },
      lastDecision: decision?.args["row"], lastDecisionSlot: decision?.args["run"],
      outcome: status?.lastOutcome.result, outcomeReason: status?.lastOutcome.reason,
      outcomeFrom: status?.lastOutcome.from, outcomeTo: status?.lastOutcome.to)
    events = deviceEvents.suffix(Self.eventLimit).map { event in
      let seconds = event.time >= startedAt ? Double(event.time - startedAt) / 1_000_000 : 0
      return [String(format3(seconds)), event.name, Self.detail(event)]
    }
    slot = Self.picture(
      status: status, digest: digest, pushing: push?.running == true,
      windowCapacity: windowCapacity)
  }

  /// The slot being written: the journal's slot, size and committed offset, and the windows of the
  /// transfer since its last PREPARE.
  static func picture(
    status: DeviceStatusReport?, digest: DeviceEventDigest, pushing: Bool, windowCapacity: Int
  ) -> SlotPicture? {
    let deviceEvents = digest.events
    guard let status, case .journal(let journal) = status.transfer, journal.size > 0 else { return nil }
    let since = deviceEvents.lastIndex { $0.name == "PREPARE" && $0.args["status"] == "success" }
    let windows = deviceEvents[(since.map { $0 + 1 } ?? 0)...].filter { $0.name == "window" }
    let receiving = pushing && journal.state == "receiving"
    return SlotPicture(
      slot: journal.slot, size: Int(journal.size), committed: Int(journal.committed), windows: Array(windows),
      checkedEarlier: digest.windowsCheckedEarlier, receiving: receiving, windowCapacity: windowCapacity)
  }

  static func detail(_ event: DeviceEvent) -> String {
    let keys = [
      "row", "run", "version", "rolledBack", "offset", "length", "crc", "committed", "status", "reason",
      "mtu", "passed", "exit", "verdict", "slot", "onTrial", "from", "to", "ended", "signal", "what",
    ]
    return keys.compactMap { key in event.args[key].map { "\(key) \($0)" } }.joined(separator: ", ")
  }
}

/// Three decimals, without Foundation.
func format3(_ value: Double) -> String {
  let thousandths = Int((value * 1000).rounded())
  let whole = thousandths / 1000
  let fraction = thousandths % 1000
  return "\(whole)." + String(String(fraction + 1000).dropFirst())
}
