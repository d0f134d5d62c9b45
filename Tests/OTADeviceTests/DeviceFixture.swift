import OTABoot
import OTADeltaPlan
import OTAJournal
import OTALink
import OTAReceiverHost
import OTASender
import OTASimulation
import OTASocketLink
import OTAStorage
import OTAStorageTesting
import OTATrust
import OTAWire
import Testing

/// A device on in-memory storage: slot A holds the running image, nothing else exists yet.
struct DeviceFixture {
  static let runningVersion = Version(major: 1, minor: 0, revision: 0)
  let medium: MemoryMedium
  let runningImage: [UInt8]
  let windowCapacity: UInt32

  init(
    slotCapacity: Int, windowCapacity: UInt32 = 16 * 1024, runningImage: [UInt8]? = nil,
    bootloaderReportsPrimary: Bool = true
  ) {
    bootloader = SimulatedBootloader(reportsPrimary: bootloaderReportsPrimary)
    medium = MemoryMedium(slotCapacity: slotCapacity)
    var generator = SeededGenerator(seed: 0xA11CE)
    self.runningImage =
      runningImage ?? (0..<min(slotCapacity, 3000)).map { _ in UInt8.random(in: 0...255, using: &generator) }
    medium.fill(.a, with: self.runningImage)
    self.windowCapacity = windowCapacity
  }

  var storage: DeviceStorage { DeviceStorage(slots: SlotAccess(medium: medium), records: medium) }

  /// The pointer otad's boot stage keeps (it survives power cuts: the in-memory bootloader is durable).
  let bootloader: SimulatedBootloader
  var attempts: UInt8 = 3
  /// Trusted keys and downgrades, as otad's `[trust]` section sets them.
  var policy = ImagePolicy()
  /// What the device announces and supports (none: a device from before features).
  var features: Features = .all
  /// Writes need an authenticated link (`--require-pairing`): then a slot nobody adopted offers
  /// its bytes to copies and BLOCK HASHES.
  var pairingRequired = false
  /// An encrypted image's in-place decryption block (the daemon's is 64 KiB).
  var decryptionBlockSize = 64 * 1024

  var control: BootControl {
    BootControl(
      records: medium, backend: bootloader, factoryVersion: Self.runningVersion, attempts: attempts,
      slots: SlotAccess(medium: medium), policy: policy)
  }

  /// What the firmware on trial does at each boot.
  enum TrialVerdict {
    /// Its health check passes at once: marked good.
    case passes
    /// Its health check fails at every boot: once its boots are spent it rolls back.
    case fails
    /// Nobody decides: it stays on trial.
    case silent
  }

  /// One start of the device: the boot stage, then the daemon, whose health check gives `verdict`.
  /// Every boot in between goes through `onBoot`.
  func boot(
    verdict: TrialVerdict = .passes, onBoot: ((ReceiverHost) throws -> Void)? = nil
  ) throws -> ReceiverHost {
    while true {
      let decision: BootDecision
      do {
        decision = try control.runBootStage()
      } catch {
        // The simulation restarts the device on a power cut, as it does for the host's own errors.
        if case .storage(let storage) = error { throw storage }
        throw error
      }
      var host = try ReceiverHost(
        storage: storage, control: control, running: decision.run, windowCapacity: windowCapacity,
        imageCheck: .standard(policy), pairingRequired: pairingRequired, features: features)
      host.decryptionBlockSize = decryptionBlockSize
      try onBoot?(host)
      // The daemon supervises a provisional rebuilt state's running slot as it does a trial: a
      // health check that passes confirms it (one that fails leaves it provisional).
      if host.boot.provisional, host.running == host.boot.confirmed, case .passes = verdict {
        try host.confirmProvisional()
      }
      guard host.runningOnTrial else { return host }
      switch verdict {
      case .passes:
        try host.markGood()
        return host
      case .fails:
        try host.failTrialBoot(.healthCheckFailed)  // and restart: the next boot tries again
      case .silent:
        return host
      }
    }
  }

  func makeHost() throws -> ReceiverHost { try boot() }

  /// The running slot still holds, byte for byte, what it held before anything happened.
  var runningSlotUntouched: Bool {
    Array(medium.slotBytes(.a).prefix(runningImage.count)) == runningImage
      && medium.slotBytes(.a).dropFirst(runningImage.count).allSatisfy { $0 == 0 }
  }

  /// Pushes `image` to this device over a simulated link. A power cut reboots the medium with
  /// `powerCutSeed` (nil: every unsynced write is lost). Returns the run and the sender's report,
  /// which is nil (and recorded as an issue) unless the push succeeded.
  func push(
    _ image: [UInt8], version: Version, conditions: LinkConditions, faults: DeviceFaults = DeviceFaults(),
    seed: UInt64,
    sender: SenderConfiguration? = nil, bases: [BaseImage] = [], blockDigest: BlockDigester? = nil,
    powerCutSeed: UInt64? = nil,
    limit: Duration = .seconds(3600),
    verdict: TrialVerdict = .passes, expectSuccess: Bool = true,
    onBoot: ((ReceiverHost) throws -> Void)? = nil, sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> (result: Simulation.Result, report: SenderReport?, device: ReceiverHost?) {
    var simulation = try Simulation(
      image: image, sender: sender ?? SenderConfiguration(version: version, maxConnectAttempts: 20),
      conditions: conditions, faults: faults, seed: seed, bases: bases, blockDigest: blockDigest
    ) { afterPowerCut in
      if afterPowerCut { medium.reboot(seed: powerCutSeed) }
      return try boot(verdict: verdict, onBoot: onBoot)
    }
    let result = try simulation.run(limit: limit)
    guard case .succeeded(let report) = result.outcome else {
      if expectSuccess {
        Issue.record("push failed: \(String(describing: result.outcome))", sourceLocation: sourceLocation)
      }
      return (result, nil, simulation.device)
    }
    return (result, report, simulation.device)
  }

  static func image(size: Int, seed: UInt64) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    return (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
  }
}

extension DeviceFixture {
  /// The in-place journal file holding `journal` as its one copy (sequence `sequence`, place 0).
  static func inPlaceJournal(_ journal: TransferJournal, sequence: UInt32 = 1) -> [UInt8] {
    var file = RecordCopy(sequence: sequence, payload: journal.encoded).encoded
    file.append(contentsOf: repeatElement(0, count: 2 * AlternatingRecord.defaultPlaceSize - file.count))
    return file
  }

  /// `journal` as each otad kept it: the in-place file, and the previous otad's whole record.
  static func journalFiles(_ journal: TransferJournal) -> [(name: String, bytes: [UInt8])] {
    [
      (TransferJournalStore.fileName, inPlaceJournal(journal)),
      (TransferJournalStore.legacyFileName, journal.encoded),
    ]
  }
}
