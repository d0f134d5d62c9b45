import ArgumentParser
import FoundationEssentials
import OTADaemon
import OTAReport

struct StatusCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract:
      "Print the slots, the trial, the last update's outcome and the transfer, from the device's storage.")

  @OptionGroup(title: "Storage") var storage: StorageOptions
  @OptionGroup(title: "Images") var images: ImageOptions
  @OptionGroup(title: "Activation") var activation: ActivationOptions

  @Flag(help: "Print JSON instead of text.")
  var json = false

  func run() throws {
    let report = try DaemonSetup.daemon(try storage.configuration(images, activation)).statusReport()
    if json {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
      print(String(decoding: try encoder.encode(report), as: UTF8.self))
    } else {
      for line in report.lines { print(line) }
    }
  }
}
