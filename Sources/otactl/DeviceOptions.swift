import ArgumentParser
import Foundation
import Logging
import OTABlueZ
import OTACentral
import OTADBus
import OTALink
import OTALogging
import OTASocketLink
import OTAWire

/// How to reach one device: the device and the link options, for the commands that talk to one
/// device (`info`, `abort`, `confirm`).
struct DeviceOptions: ParsableArguments {
  @Option(help: DeviceOptions.deviceHelp)
  var device: String

  @OptionGroup var options: LinkOptions

  static let deviceHelp = ArgumentHelp(
    "The device: a Bluetooth address or advertised name, or the simulated link's socket path.",
    discussion: "A value with a '/' is a socket path (what otad --socket names); AA:BB:CC:DD:EE:FF is an "
      + "address; anything else is the name the device advertises.")

  var json: Bool { options.json }
  var isSimulated: Bool { LinkOptions.isSimulated(device) }

  func openLink() throws -> any CentralLink { try options.openLink(to: device) }
}

/// The options every device command shares: the adapter, the simulated link's conditions, the
/// output and the log. Links are made per device, so one push can reach several.
struct LinkOptions: ParsableArguments {
  @Option(help: "The Bluetooth adapter to use (default hci0).")
  var adapter = "hci0"

  @Option(help: ArgumentHelp("Link conditions (simulated link only).", discussion: LinkConditions.help))
  var link: String?

  @Flag(help: "Print JSON (one object per line while pushing) instead of text.")
  var json = false

  @Flag(name: .shortAndLong, help: "Log the conversation on standard error.")
  var verbose = false

  /// Whether `device` names the simulated link's socket rather than a Bluetooth device.
  static func isSimulated(_ device: String) -> Bool { device.contains("/") }

  /// The link, or exit code 3 with the reason on standard error.
  func openLink(to device: String, dataPath: DataPath = .gatt, linkFacts: Bool = false) throws
    -> any CentralLink
  {
    do {
      return try makeLink(to: device, dataPath: dataPath, linkFacts: linkFacts)
    } catch let failure as LinkFailure {
      FileHandle.standardError.write(Data("otactl: \(failure)\n".utf8))
      throw ExitCode(.unreachable)
    }
  }

  /// The link to the device: the simulated one (on `radio`, when several links share one), or
  /// BlueZ on the system bus. `linkFacts`: read the link's parameters from the controller's events
  /// (BlueZ only).
  func makeLink(
    to device: String, dataPath: DataPath = .gatt, linkFacts: Bool = false, radio: SharedRadio? = nil
  ) throws -> any CentralLink {
    if Self.isSimulated(device) {
      return SocketCentral(path: device, conditions: try conditions(), radio: radio)
    }
    guard link == nil else { throw ValidationError("--link applies to the simulated link only") }
    do {
      return try BlueZCentral(
        connection: try DBusConnection(bus: .system), adapter: adapter, selector: DeviceSelector(device),
        queueDepth: 32, dataPath: dataPath, linkFacts: linkFacts,
        logger: logger())
    } catch {
      throw LinkFailure(
        "cannot reach bluetoothd on the system bus (\(error.message)). Is bluetoothd running?")
    }
  }

  func conditions() throws -> LinkConditions {
    guard let link else { return LinkConditions() }
    do {
      return try LinkConditions(spec: link)
    } catch {
      throw ValidationError("--link: \(error)")
    }
  }

  func logger() -> Logger {
    var logger = Logger(label: "otactl") { label in JournalLogHandler.standardError(label: label) }
    logger.logLevel = verbose ? .debug : .warning
    return logger
  }
}

extension DataPath: ExpressibleByArgument {}

extension Version: ExpressibleByArgument {
  public init?(argument: String) { self.init(text: argument) }
}

/// A link that cannot be set up: said on standard error, exit code 3 (device not reachable).
struct LinkFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
