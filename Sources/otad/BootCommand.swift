import ArgumentParser
import Logging
import OTABoot
import OTADaemon
import OTAStorage

struct BootCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "boot",
    abstract: "The boot stage: pick the slot to run, count a trial boot, roll back a spent trial.",
    discussion: """
      Run once per boot, before the firmware (otad-boot.service does), when [boot] stage = "separate".
      It reads the boot state and what the bootloader says it started, decides with the boot table
      (docs/BOOT.md), saves the decision and makes the bootloader's pointer agree. When the bootloader
      started a slot the state no longer wants, it restarts the device (the configured restart action).
      """)

  @OptionGroup(title: "Storage") var storage: StorageOptions
  @OptionGroup(title: "Images") var images: ImageOptions
  @OptionGroup(title: "Boot") var boot: BootOptions
  @OptionGroup var log: LogOptions

  func run() throws {
    let configuration = try storage.configuration(images, boot, log)
    DaemonSetup.bootstrapLogging(configuration)
    let logger = Logger(label: "otad-boot")
    let control = try DaemonSetup.daemon(configuration).control
    let decision = try BootStageReport.run(control, logger: logger).decision
    print("slot \(decision.run): \(decision.row.rawValue)")
    if decision.restart {
      try Restarter(restart: configuration.boot.restart, backend: control.backend, logger: logger)
        .restart(into: decision.state.plan)
    }
  }
}

struct MarkGoodCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "mark-good",
    abstract: "Confirm the slot running on trial: it becomes the one that boots.",
    discussion: """
      For firmware that checks itself (as RAUC's mark-good): run it once the new firmware works. A
      running daemon is told (SIGHUP). Nothing changes when no trial runs.
      """)

  @OptionGroup(title: "Storage") var storage: StorageOptions
  @OptionGroup(title: "Images") var images: ImageOptions

  func run() throws {
    let daemon = try DaemonSetup.daemon(try storage.configuration(images))
    switch try daemon.control.markGood() {
    case .confirmedProvisional(let after):
      print(
        "slot \(after.confirmed) (firmware \(after[after.confirmed].version)) confirmed as the good slot "
          + "of a rebuilt boot state; slot \(after.confirmed.other) may be written again")
    case .nothingToConfirm(let before):
      print(
        "nothing to confirm: slot \(before.confirmed) runs firmware \(before[before.confirmed].version), confirmed"
      )
      return
    case .confirmedTrial(let after):
      print("slot \(after.confirmed) (firmware \(after[after.confirmed].version)) confirmed")
    case .sealBroken(let why, let after):
      // The trial is marked bad: the daemon, told, restarts into the confirmed slot.
      notifyDaemon(daemon.layout)
      throw ValidationError(
        "not confirmed: \(why). The trial is marked bad; slot \(after.confirmed) boots again. Push the image again."
      )
    }
    notifyDaemon(daemon.layout)
  }
}

struct MarkBadCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "mark-bad",
    abstract: "Reject the slot running on trial: the confirmed slot boots again.",
    discussion: """
      The trial's slot is marked bad and the last outcome says "marked bad". A running daemon is told
      (SIGHUP) and restarts into the confirmed slot; without one, restart the device yourself.
      """)

  @OptionGroup(title: "Storage") var storage: StorageOptions
  @OptionGroup(title: "Images") var images: ImageOptions

  func run() throws {
    let daemon = try DaemonSetup.daemon(try storage.configuration(images))
    switch try daemon.control.markBad() {
    case .noTrial(let before):
      throw ValidationError(
        "no slot is on trial: slot \(before.confirmed) is confirmed and is never marked bad")
    case .markedBad(let slot, let after):
      print(
        "slot \(slot) (firmware \(after[slot].version)) marked bad; slot \(after.confirmed) "
          + "(firmware \(after[after.confirmed].version)) boots next")
    }
    notifyDaemon(daemon.layout)
  }
}

private func notifyDaemon(_ layout: DeviceLayout) {
  if PidFile(directory: layout.stateDirectory).signalReload() { print("told the running otad") }
}
