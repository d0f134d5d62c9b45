import Logging
import OTABoot
import OTAEngine
import OTAReport
import OTAStorage
import OTATrust
import OTAWire

extension DeviceStatusReport {
  /// The report from what storage says (`status`), the boot state as the daemon would act on it
  /// (`reading`, rebuilt from evidence when the record is unusable) and the running image's check.
  public init(
    status: DeviceStatus, reading: BootStateReading, runningImage: InstalledImageCheck?, layout: DeviceLayout,
    configuration: DaemonConfiguration
  ) {
    let state = reading.state
    let outcome = state.outcome
    let journal: Transfer =
      switch status.transfer {
      case .missing: .missing
      case .damaged: .damaged
      case .present(let journal):
        .journal(
          Journal(
            state: "\(journal.state)", slot: "\(journal.slot)", size: journal.size,
            crc32: Self.hex(journal.crc32), version: "\(journal.version)", committed: journal.committedOffset)
        )
      }
    self.init(
      running: "\(state.running)", confirmed: "\(state.confirmed)", onTrial: state.runningOnTrial,
      bootloader: configuration.boot.backend.rawValue,
      slots: SlotID.allCases.map { slot in
        let content = state[slot]
        return Slot(
          slot: "\(slot)", running: state.running == slot, confirmed: state.confirmed == slot,
          status: "\(content.status)", version: content.status == .empty ? nil : "\(content.version)",
          capacity: status.slotCapacities[slot], path: layout.slots[slot],
          securityCounter: content.securityCounter)
      },
      trial: state.trial.map {
        Trial(
          slot: "\($0.slot)", attemptsLeft: $0.attemptsLeft, attemptsAllowed: $0.attemptsAllowed,
          begun: $0.begun)
      },
      lastOutcome: Outcome(
        result: "\(outcome.result)", from: "\(outcome.from)", to: "\(outcome.to)",
        reason: "\(outcome.reason)",
        attemptsUsed: outcome.attemptsUsed),
      bootState: status.boot.summary, runningImage: runningImage.map { "\($0)" },
      provisional: state.provisional,
      rebuilt: reading.recovery.flatMap { recovery in
        recovery.basis == .factory
          ? nil
          : Rebuilt(
            kept: "\(recovery.kept)", basis: recovery.basis.rawValue, certain: recovery.certain,
            findings: recovery.findings)
      },
      securityFloor: state.securityFloor, signaturesRequired: !configuration.trust.keyFiles.isEmpty,
      trustedKeys: configuration.trust.keyFiles, downgradesAllowed: configuration.trust.allowDowngrade,
      transfer: journal, decryptionKey: configuration.trust.decryptionKeyFile)
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
    var report = DeviceStatusReport(
      status: status, reading: reading, runningImage: runningImage, layout: layout,
      configuration: configuration)
    report.activation = ActivationStatus.read(
      storage, journal: status.transfer.value, configuration: configuration,
      surroundings: UpdateLockDirectory(
        path: configuration.lockDirectory, logger: Logger(label: "otad.status")))
    return report
  }
}
