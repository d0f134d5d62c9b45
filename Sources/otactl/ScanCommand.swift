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
      JSONOutput.document(
        devices.map {
          ScannedDeviceJSON(
            address: $0.address, name: Nullable($0.name), rssi: Nullable($0.rssi.map { Int($0) }))
        })
      return
    }
    if devices.isEmpty { print("no device offering the OTA service answered within \(seconds) s") }
    for device in devices {
      print(
        "\(device.address)  \(device.rssi.map { "\($0) dBm" } ?? "   ? dBm")  \(device.name ?? "(no name)")")
    }
  }
}

/// One device `otactl scan --json` found.
struct ScannedDeviceJSON: Encodable {
  let address: String
  let name: Nullable<String>
  let rssi: Nullable<Int>
}
