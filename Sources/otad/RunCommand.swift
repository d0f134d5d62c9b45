import ArgumentParser
import Logging
import OTABlueZ
import OTABoot
import OTADBus
import OTADaemon
import OTALink
import OTASocketLink
import OTAStorage
import OTASystem

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

  @OptionGroup(title: "Storage") var storage: StorageOptions
  @OptionGroup(title: "Images") var images: ImageOptions
  @OptionGroup(title: "Activation") var activation: ActivationOptions
  @OptionGroup(title: "Serving") var serve: ServeOptions
  @OptionGroup(title: "Boot") var boot: BootOptions
  @OptionGroup(title: "Trial") var trial: TrialOptions
  @OptionGroup(title: "Faults on demand") var faults: FaultOptions
  @OptionGroup var log: LogOptions

  @Option(
    help: ArgumentHelp(
      "Write what the daemon does as a trace (Chrome's Trace Event Format, for Perfetto or chrome://tracing) to this file; a restart continues it.",
      valueName: "file"))
  var trace: String?

  @Option(
    help: ArgumentHelp(
      "Write each central's session (what it sent and when, the faults that fired, how it ended) to this folder, as text and as a trace (docs/APP-TESTING.md).",
      valueName: "folder"))
  var sessions: String?

  /// Everything `otad run` needs, parsed; a usage error (exit 64) when something is missing.
  func settings() throws -> DaemonSettings {
    do {
      return try storage.configuration(images, activation, serve, boot, trial, faults, log).settings()
    } catch let error as ConfigurationError {
      throw ValidationError("\(error)")
    }
  }

  /// The settings, with everything refused that cannot serve (exit 64, before anything moves):
  /// checked when the command runs rather than in validate(), because ArgumentParser validates before
  /// it reports an unknown option, and a missing configuration file would hide a misspelled flag.
  func checkedSettings() throws -> DaemonSettings {
    let settings = try settings()
    _ = try DaemonSetup.imagePolicy(settings.configuration)
    _ = try DaemonSetup.secureDFUTrust(settings.configuration)
    try DaemonSetup.checkStorage(settings.layout, boot: settings.configuration.boot)
    return settings
  }

  func run() throws {
    let settings = try checkedSettings()
    DaemonSetup.bootstrapLogging(settings.configuration)
    let logger = Logger(label: "otad")
    do {
      let daemon = try Daemon(
        layout: settings.layout, configuration: settings.configuration,
        policy: try DaemonSetup.imagePolicy(settings.configuration))
      let traceFile = trace.map { DeviceTraceFile(path: $0) }
      let sessionFiles = try sessions.map { folder in
        do {
          return try SessionReportFiles(directory: folder)
        } catch {
          throw ValidationError("--sessions \(folder): cannot make that folder (\(error))")
        }
      }
      var environment = Self.environment(daemon, logger: logger)
      environment.observe = { activity in
        traceFile?.record(activity)
        sessionFiles?.record(activity)
      }
      environment.observesDataWrites = sessionFiles != nil
      try daemon.serve(link: settings.link, environment: environment, logger: logger)
      traceFile?.write()
    } catch let error as StorageError {
      try Self.stop(error)
    } catch BootError.storage(let error) {
      try Self.stop(error)
    }
  }

  /// A storage failure that stops the daemon (at start-up: a read-only or full state directory): the
  /// operation, the path, strerror and what to do, on one line; exit 74 (EX_IOERR).
  private static func stop(_ error: StorageError) throws -> Never {
    StandardStreams.writeError("otad: storage failed: \(error.explanation)\n")
    throw ExitCode(OtadExitCode.ioError.rawValue)
  }

  /// What only the executable can give the daemon: the link (BlueZ over the system bus, or the
  /// simulated one), the pid file, restarts.
  private static func environment(_ daemon: Daemon, logger: Logger) -> Daemon.Environment {
    let pidFile = PidFile(directory: daemon.layout.stateDirectory)
    let restarter = Restarter(
      restart: daemon.configuration.boot.restart, backend: daemon.control.backend, logger: logger)
    return Daemon.Environment(
      openLink: { link, logger in try open(link, daemon.configuration, logger: logger) },
      announce: { pidFile.write() }, withdraw: { pidFile.remove() },
      restart: { plan in try restarter.restart(into: plan) })
  }

  private static func open(_ link: DeviceLink, _ configuration: DaemonConfiguration, logger: Logger) throws
    -> Daemon.OpenLink
  {
    switch link {
    case .bluetooth(let adapter):
      var options = BlueZPeripheral.Options(
        adapter: adapter, localName: configuration.localName,
        requireEncryption: configuration.requirePairing, smp: configuration.smpBluetooth,
        l2capPSM: configuration.l2cap ? configuration.l2capPSM : nil)
      options.legacyDFU = configuration.legacyDFU
      options.secureDFU = configuration.secureDFU
      let peripheral = try BlueZPeripheral(
        connection: try DBusConnection(bus: .system), options: options, logger: logger)
      logger.info(
        "registering with bluetoothd",
        metadata: ["adapter": "\(adapter)", "name": "\(configuration.localName)"])
      return Daemon.OpenLink(link: peripheral, close: { peripheral.unregister() })
    case .socket(let path):
      let conditions = try DaemonSetup.linkConditions(configuration)
      let socket = try SocketPeripheral(path: path, conditions: conditions)
      logger.info("listening", metadata: ["socket": "\(path)", "link": "\(conditions)"])
      return Daemon.OpenLink(link: socket, close: { socket.unlinkSocket() })
    }
  }
}
