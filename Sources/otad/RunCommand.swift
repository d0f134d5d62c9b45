import ArgumentParser
import Foundation
import Logging
import OTABlueZ
import OTADBus
import OTADevice
import OTALink
import OTAStorage

struct RunCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "run",
    abstract: "Serve the OTA protocol until SIGTERM or SIGINT.",
    discussion: """
      After a successful ACTIVATE the daemon restarts itself (it re-executes) and comes back running
      the new slot. SIGKILL at any moment loses nothing the device acknowledged: windows are durable
      before they are answered.
      """)

  @OptionGroup var options: DaemonOptions

  func validate() throws {
    let configuration = try options.configuration()
    do {
      _ = try configuration.validated()
    } catch {
      throw ValidationError("\(error)")
    }
    if let capacity = configuration.slotCapacity, capacity == 0 {
      throw ValidationError("--capacity must be more than 0")
    }
  }

  func run() throws {
    let configuration = try options.configuration().validated()
    LoggingSystem.bootstrap { label in
      var handler = StreamLogHandler.standardError(label: label)
      handler.logLevel = configuration.logLevel
      return handler
    }
    let logger = Logger(label: "otad")
    let storage = try DaemonOptions.storage(configuration)
    let host = try ReceiverHost(
      storage: storage, windowCapacity: configuration.windowCapacity, windowGrace: configuration.windowGrace,
      factoryVersion: configuration.factoryVersion, imageCheck: StandardImageCheck.check)
    let info = host.info()
    logger.notice(
      "running slot \(info.runningSlot), version \(info.runningVersion)\(host.boot.runningOnTrial ? " (on trial)" : "")",
      metadata: [
        "transfer": "\(info.transfer.state)", "committed": "\(info.transfer.committedOffset)",
        "capacity": "\(info.slotCapacity)",
      ])
    let stopSignals = try StopSignals()
    let link: any PeripheralLink
    var bluez: BlueZPeripheral?
    if let adapter = configuration.bluezAdapter {
      let peripheral = try BlueZPeripheral(
        connection: try DBusConnection(bus: .system),
        options: .init(
          adapter: adapter, localName: configuration.localName,
          requireEncryption: configuration.requirePairing),
        logger: logger)
      logger.info(
        "registering with bluetoothd",
        metadata: ["adapter": "\(adapter)", "name": "\(configuration.localName)"])
      link = peripheral
      bluez = peripheral
    } else {
      let socket = try SocketPeripheral(path: configuration.socket!, conditions: configuration.link)
      logger.info(
        "listening", metadata: ["socket": "\(configuration.socket!)", "link": "\(configuration.link)"])
      link = socket
    }
    let service = DeviceService(host: host, link: link, logger: logger)
    let stop = try service.run(stopSignals: stopSignals)
    (link as? SocketPeripheral)?.unlinkSocket()
    switch stop {
    case .signal(let number):
      bluez?.unregister()
      logger.notice("stopping on signal \(number)")
    case .restart:
      try reexecute(logger)
    }
  }

  /// Restarts this process in place: the same program and arguments, a fresh start.
  private func reexecute(_ logger: Logger) throws {
    let arguments = CommandLine.arguments
    var pointers = arguments.map { strdup($0) }
    pointers.append(nil)
    execv("/proc/self/exe", &pointers)
    logger.critical("could not restart: \(String(cString: strerror(errno)))")
    throw ExitCode(70)
  }
}
