import ArgumentParser
import Foundation
import OTADevice
import OTAEngine
import OTAStorage
import OTAWire

struct StatusCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract:
      "Print the slots, the trial, the last update's outcome and the transfer, from the device's storage.")

  @OptionGroup var options: DaemonOptions

  @Flag(help: "Print JSON instead of text.")
  var json = false

  func run() throws {
    let configuration = try options.configuration()
    let (storage, control) = try DaemonOptions.device(configuration)
    let status = try DeviceStatus.read(storage)
    // What the daemon would act on, rebuilt from evidence when the record is unusable; nothing is
    // written here.
    let reading = try control.inspect()
    let state = reading.state
    let recovery = reading.recovery.flatMap { $0.basis == .factory ? nil : $0 }
    let imageCheck: InstalledImageCheck?
    do {
      imageCheck = try control.checkInstalledImage(state.running, in: state)
    } catch {
      imageCheck = .rotten("slot \(state.running) cannot be read: \(error)")
    }
    let transfer: TransferJournal? =
      if case .present(let journal) = status.transfer { journal } else { nil }
    let paths = [configuration.slotA ?? "?", configuration.slotB ?? "?"]

    if json {
      var slots: [[String: Any]] = []
      for slot in SlotID.allCases {
        let content = state[slot]
        slots.append([
          "slot": "\(slot)", "running": state.running == slot, "confirmed": state.confirmed == slot,
          "status": "\(content.status)",
          "version": content.status == .empty ? NSNull() : "\(content.version)" as Any,
          "capacity": status.slotCapacities[slot], "path": paths[Int(slot.rawValue)],
          "securityCounter": Int(content.securityCounter),
        ])
      }
      var object: [String: Any] = [
        "running": "\(state.running)", "confirmed": "\(state.confirmed)", "onTrial": state.runningOnTrial,
        "slots": slots, "bootState": status.boot.summary, "bootloader": configuration.boot.backend.rawValue,
        "securityFloor": Int(state.securityFloor),
        "runningImage": imageCheck.map { "\($0)" } ?? NSNull(),
        "provisional": state.provisional,
        "signaturesRequired": !configuration.trust.keyFiles.isEmpty,
        "downgradesAllowed": configuration.trust.allowDowngrade,
        "lastOutcome": [
          "result": "\(state.outcome.result)", "from": "\(state.outcome.from)", "to": "\(state.outcome.to)",
          "reason": "\(state.outcome.reason)", "attemptsUsed": Int(state.outcome.attemptsUsed),
        ],
      ]
      if let recovery {
        object["rebuilt"] = [
          "kept": "\(recovery.kept)", "basis": recovery.basis.rawValue, "certain": recovery.certain,
          "findings": recovery.findings,
        ]
      }
      if let trial = state.trial {
        object["trial"] = [
          "slot": "\(trial.slot)", "attemptsLeft": Int(trial.attemptsLeft),
          "attemptsAllowed": Int(trial.attemptsAllowed), "begun": trial.begun,
        ]
      }
      if let transfer {
        object["transfer"] = [
          "state": "\(transfer.state)", "slot": "\(transfer.slot)", "size": transfer.size,
          "crc32": String(format: "%08x", transfer.crc32), "version": "\(transfer.version)",
          "committed": transfer.committedOffset,
        ]
      } else {
        object["transfer"] = status.transfer.summary
      }
      let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
      print(String(decoding: data, as: UTF8.self))
      return
    }
    print("running: slot \(state.running)\(state.runningOnTrial ? " (on trial)" : " (confirmed)")")
    if let imageCheck { print("running image: \(imageCheck)") }
    for slot in SlotID.allCases {
      let content = state[slot]
      let version = content.status == .empty ? "no image" : "firmware \(content.version), \(content.status)"
      let marker = state.running == slot ? "▶" : " "
      print(
        "  \(marker) slot \(slot): \(version)  (\(paths[Int(slot.rawValue)]), "
          + "\(status.slotCapacities[slot]) bytes)")
    }
    if let trial = state.trial {
      print(
        "trial: slot \(trial.slot), \(trial.attemptsUsed) of \(trial.attemptsAllowed) boot(s) used"
          + (trial.begun ? "" : " (armed: it runs at the next start)"))
    }
    print("last update: \(Self.describe(state.outcome))")
    print(
      "trust: "
        + (configuration.trust.keyFiles.isEmpty
          ? "no signature required"
          : "signed by one of \(configuration.trust.keyFiles.joined(separator: ", "))")
        + "; downgrades \(configuration.trust.allowDowngrade ? "allowed" : "refused"); security counter floor "
        + "\(state.securityFloor)")
    if let recovery {
      print("boot state: REBUILT from evidence (\(status.boot == .missing ? "missing" : "unusable"))")
      for finding in recovery.findings { print("  \(finding)") }
      if !recovery.certain {
        print(
          "  updates are refused until you check that slot \(recovery.kept) runs the right firmware and run "
            + "`otad mark-good`")
      }
    } else {
      switch status.boot {
      case .damaged: print("boot state: damaged (it will be moved aside at the next start)")
      case .missing: print("boot state: none yet (a factory device)")
      case .present: break
      }
    }
    switch status.transfer {
    case .missing: print("transfer: none")
    case .damaged: print("transfer: journal damaged (it will be moved aside at the next start)")
    case .present(let journal):
      let percent = journal.size > 0 ? Int(UInt64(journal.committedOffset) * 100 / UInt64(journal.size)) : 0
      print(
        "transfer: \(journal.state) firmware \(journal.version) into slot \(journal.slot): "
          + "\(journal.committedOffset) of \(journal.size) bytes committed (\(percent)%)")
    }
  }

  static func describe(_ outcome: UpdateOutcome) -> String {
    switch outcome.result {
    case .none: "none"
    case .succeeded: "\(outcome.from) → \(outcome.to) succeeded (\(outcome.attemptsUsed) trial boot(s))"
    case .rolledBack:
      "\(outcome.from) → \(outcome.to) rolled back: \(outcome.reason), after \(outcome.attemptsUsed) boot(s)"
    }
  }
}
