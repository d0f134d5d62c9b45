import ArgumentParser
import Foundation
import OTADevice
import OTAEngine
import OTAStorage
import OTAWire

struct StatusCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract: "Print the slots, their versions, and the transfer in progress, from the device's storage.")

  @OptionGroup var options: DaemonOptions

  @Flag(help: "Print JSON instead of text.")
  var json = false

  func run() throws {
    let configuration = try options.configuration()
    let status = try DeviceStatus.read(try DaemonOptions.storage(configuration))
    let boot: BootRecord? =
      if case .present(let record) = status.boot { record } else { nil }
    let effective = boot ?? BootRecord.factory(runningVersion: configuration.factoryVersion)
    let transfer: TransferJournal? =
      if case .present(let journal) = status.transfer { journal } else { nil }

    if json {
      var slots: [[String: Any]] = []
      for slot in SlotID.allCases {
        slots.append([
          "slot": "\(slot)", "running": effective.running == slot,
          "version": effective.version(of: slot).map { "\($0)" } ?? NSNull(),
          "capacity": status.slotCapacities[Int(slot.rawValue)],
          "path": slot == .a ? configuration.slotA ?? "" : configuration.slotB ?? "",
        ])
      }
      var object: [String: Any] = [
        "running": "\(effective.running)", "onTrial": effective.runningOnTrial, "slots": slots,
        "bootRecord": describe(status.boot),
      ]
      if let transfer {
        object["transfer"] = [
          "state": "\(transfer.state)", "slot": "\(transfer.slot)", "size": transfer.size,
          "crc32": String(format: "%08x", transfer.crc32), "version": "\(transfer.version)",
          "committed": transfer.committedOffset,
        ]
      } else {
        object["transfer"] = describe(status.transfer)
      }
      let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
      print(String(decoding: data, as: UTF8.self))
      return
    }
    print("running: slot \(effective.running)\(effective.runningOnTrial ? " (on trial)" : " (confirmed)")")
    for slot in SlotID.allCases {
      let version = effective.version(of: slot).map { "firmware \($0)" } ?? "no image"
      let path = slot == .a ? configuration.slotA ?? "?" : configuration.slotB ?? "?"
      let marker = effective.running == slot ? "▶" : " "
      print(
        "  \(marker) slot \(slot): \(version)  (\(path), \(status.slotCapacities[Int(slot.rawValue)]) bytes)")
    }
    if case .damaged = status.boot {
      print("boot record: damaged (it will be moved aside at the next start)")
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

  private func describe<T>(_ record: DeviceStatus.Record<T>) -> String {
    switch record {
    case .missing: "missing"
    case .damaged: "damaged"
    case .present: "present"
    }
  }
}
