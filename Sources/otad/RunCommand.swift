import ArgumentParser
import Foundation
import Logging
import OTABlueZ
import OTADBus
import OTADevice
import OTALink
import OTASocketLink
import OTAStorage
import OTASystem
import OTATrust
import OTAWire

struct RunCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "run",
    abstract: "Serve the OTA protocol until SIGTERM or SIGINT.",
    discussion: """
      With [boot] stage = "daemon" (the default) each start is a boot: the boot stage runs first and
      picks the slot. After ACTIVATE the daemon restarts (the configured restart action) into the trial;
      a slot on trial runs the health check, then is marked good, or bad and rolled back. SIGHUP reloads
      the boot state (otad mark-good and mark-bad send it). SIGKILL at any moment loses nothing the
      device acknowledged: windows are durable before they are answered.
      """)

  @OptionGroup var options: DaemonOptions

  func validate() throws {
    let configuration = try options.configuration()
    do {
      _ = try configuration.validated()
    } catch {
      throw ValidationError("\(error)")
    }
    _ = try DaemonOptions.imagePolicy(configuration)
    try DaemonOptions.checkStorage(configuration)
  }

  func run() throws {
    let configuration = try options.configuration().validated()
    DaemonOptions.bootstrapLogging(configuration)
    let logger = Logger(label: "otad")
    do {
      try serve(configuration, logger: logger)
    } catch let error as StorageError {
      try Self.stop(error)
    } catch BootError.storage(let error) {
      try Self.stop(error)
    }
  }

  /// A storage failure that stops the daemon (at start-up: a read-only or full state directory): the
  /// operation, the path, strerror and what to do, on one line; exit 74 (EX_IOERR).
  private static func stop(_ error: StorageError) throws -> Never {
    FileHandle.standardError.write(Data("otad: storage failed: \(error.explanation)\n".utf8))
    throw ExitCode(74)
  }

  private func serve(_ configuration: DaemonConfiguration, logger: Logger) throws {
    let (storage, control) = try DaemonOptions.device(configuration)
    try (storage.records as? FileRecordStore)?.checkWritable()
    let restarter = Restarter(restart: configuration.boot.restart, backend: control.backend, logger: logger)
    var running: SlotID?
    var runningImage: InstalledImageCheck?
    if configuration.boot.stage == .daemon {
      let stage = try BootStageReport.run(control, logger: logger)
      if stage.decision.restart { try restarter.restart(into: stage.decision.state.plan) }
      running = stage.decision.run
      runningImage = stage.image
    }
    var host = try ReceiverHost(
      storage: storage, control: control, running: running, windowCapacity: configuration.windowCapacity,
      windowGrace: configuration.windowGrace,
      imageCheck: .standard(try DaemonOptions.imagePolicy(configuration)),
      pairingRequired: configuration.requirePairing)
    for notice in host.startNotices { logger.error("\(notice)") }
    let info = host.info()
    logger.notice(
      "running slot \(info.runningSlot), version \(info.runningVersion)\(host.runningOnTrial ? " (on trial)" : "")",
      metadata: [
        "transfer": "\(info.transfer.state)", "committed": "\(info.transfer.committedOffset)",
        "capacity": "\(info.slotCapacity)", "bootloader": "\(control.backend.name)",
      ])
    let policy = host.imageCheck.policy
    logger.notice(
      policy.requiresSignature
        ? "images must be signed by: \(policy.trustedKeys.map(\.description).joined(separator: ", "))"
        : "images need no signature (no [trust] keys): their CRC32 and MCUboot hash are still checked",
      metadata: [
        "downgrades": "\(policy.allowDowngrade ? "allowed" : "refused")",
        "security-floor": "\(host.boot.securityFloor)",
      ])
    if host.running != host.boot.confirmed, host.boot.trial?.slot != host.running {
      logger.warning("the bootloader started slot \(host.running), which the boot state does not confirm")
    }
    guard let stateDirectory = configuration.stateDirectory else {
      throw ValidationError("a state directory is needed: --state-dir (or [state] directory)")
    }
    let pidFile = PidFile(directory: stateDirectory)
    pidFile.write()
    defer { pidFile.remove() }
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
    } else if let path = configuration.socket {
      let socket = try SocketPeripheral(path: path, conditions: configuration.link)
      logger.info("listening", metadata: ["socket": "\(path)", "link": "\(configuration.link)"])
      link = socket
    } else {
      throw ValidationError(
        "a link is needed: --adapter hci0 for Bluetooth (or [bluez] adapter), or --socket PATH for the simulated link"
      )
    }
    let environment = HealthEnvironment.make(
      boot: host.boot, slot: host.running,
      slotPath: (host.running == .a ? configuration.slotA : configuration.slotB) ?? "",
      reader: try? storage.slots.reader(host.running),
      // Only a trial runs the health check; the boot stage has checked the image already, if it ran.
      imageCheck: host.runningOnTrial
        ? runningImage ?? (try? control.checkInstalledImage(host.running, in: host.boot)) : nil)
    let service = DeviceService(
      host: host, link: link, logger: logger, trial: configuration.boot.trial, healthEnvironment: environment)
    let stop = try service.run(stopSignals: stopSignals)
    host = service.host
    (link as? SocketPeripheral)?.unlinkSocket()
    switch stop {
    case .signal(let number):
      bluez?.unregister()
      logger.notice("stopping on signal \(number)")
    case .restart:
      bluez?.unregister()
      pidFile.remove()
      try restarter.restart(into: host.boot.plan)
    }
  }
}
