import ArgumentParser
import Foundation
import OTABlueZ
import OTACentral
import OTADBus

/// `scan`: which devices around offer the OTA service.
struct ScanCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "scan", abstract: "List the devices that advertise the OTA service, strongest first.")

  @Option(help: "The Bluetooth adapter to use (default hci0).")
  var adapter = "hci0"

  @Option(help: "How long to listen, in seconds.")
  var seconds = 5.0

  @Flag(help: "Print JSON instead of text.")
  var json = false

  func validate() throws {
    try OptionChecks.seconds(seconds, "--seconds", maximum: 3600)
  }

  func run() throws {
    let devices: [ScannedDevice]
    do {
      devices = try BlueZScanner.scan(
        connection: try DBusConnection(bus: .system), adapter: adapter,
        duration: .milliseconds(Int64(seconds * 1000)))
    } catch {
      FileHandle.standardError.write(
        Data(
          "otactl: scanning on \(adapter) failed: \(error.message). Is bluetoothd running, the adapter on?\n"
            .utf8))
      throw ExitCode(.unreachable)
    }
    if json {
      let objects = devices.map { device -> [String: Any] in
        [
          "address": device.address, "name": device.name ?? NSNull(),
          "rssi": device.rssi.map { Int($0) } ?? NSNull(),
        ]
      }
      let data = try JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys])
      print(String(decoding: data, as: UTF8.self))
      return
    }
    if devices.isEmpty { print("no device offering the OTA service answered within \(seconds) s") }
    for device in devices {
      print(
        "\(device.address)  \(device.rssi.map { "\($0) dBm" } ?? "   ? dBm")  \(device.name ?? "(no name)")")
    }
  }
}
