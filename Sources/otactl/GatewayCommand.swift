import ArgumentParser
import Foundation
import Logging
import OTABlueZ
import OTACentral
import OTADBus
import OTAGateway
import OTAGatewayHTTP
import OTALink
import OTALogging
import OTASender
import OTASocketLink
import OTASystem
import OTAWire

/// `gateway`: the devices near this machine as targets of a hawkBit DDI server (hawkBit itself,
/// goosebit): each polled as DDI says, each deployment's artifact downloaded once and pushed to
/// every device that has it, each result reported once. docs/FLEET.md.
struct GatewayCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "gateway",
    abstract: "Serve the devices near this machine as targets of a hawkBit DDI update server.",
    discussion: """
      Each device is the target named by its serial (the Device Information Service's Serial Number
      String). Its attributes (model, hardware revision, versions, last update) go to the server as
      config data; each deployment's .swu (made by `otactl image pack`) is downloaded once, checked
      (the server's hash, the hardware, the image's own SHA-256 and version) and pushed to every device
      that has the action, several at once. Runs until stopped; --once runs one poll cycle.

      Example:
        otactl gateway --server https://updates.example.com --token-file /etc/blueota/gateway-token \\
          --scan 10 --state-dir /var/lib/blueota-gateway
      """)

  @Option(help: "The DDI server's address, e.g. https://hawkbit.example.com or http://127.0.0.1:60053.")
  var server: String

  @Option(help: "The server's tenant (hawkBit's and goosebit's default: DEFAULT).")
  var tenant = "DEFAULT"

  @Option(
    help: "A device: a Bluetooth address or name, or a simulated link's socket path. Give it several times.")
  var device: [String] = []

  @Option(name: .customLong("devices"), help: "A file naming devices, one per line ('#' starts a comment).")
  var devicesFile: String?

  @Option(
    name: .customLong("socket-dir"),
    help: "Every simulated device whose socket (NAME.sock) is in this directory, as found at each poll.")
  var socketDirectory: String?

  @Option(help: "Scan this many seconds for devices advertising the OTA service at each poll (Bluetooth).")
  var scan: Double?

  @Option(
    name: .customLong("token-file"),
    help: "A file (mode 0600) holding the server's gateway token: sent as 'Authorization: GatewayToken ...'.")
  var tokenFile: String?

  @Option(
    name: .customLong("target-tokens"),
    help: "A file (mode 0600) of 'controllerId token' lines: each sent as 'Authorization: TargetToken ...'.")
  var targetTokens: String?

  @Option(
    name: .customLong("ca-file"),
    help: "A PEM file of the certificate authorities to trust for an HTTPS server (a private CA).")
  var caFile: String?

  @Option(
    name: .customLong("state-dir"),
    help:
      "Where the gateway keeps its downloads, the actions it began and each serial's Bluetooth identity (default $HOME/.cache/otactl-gateway)."
  )
  var stateDirectory: String?

  @Option(
    help: ArgumentHelp(
      "Forget a serial's Bluetooth identity (and its alarm): the next device saying it is bound. Give it several times.",
      valueName: "serial"))
  var rebind: [String] = []

  @Option(
    name: .customLong("max-artifact-mib"),
    help: "The largest artifact downloaded, in MiB (1-4096, default 1024): a larger one is refused.")
  var maxArtifactMiB = 1024

  @Option(
    name: .customLong("max-partial-mib"),
    help: "Partial downloads kept to resume, in MiB all together (default 1024): the oldest go first.")
  var maxPartialMiB = 1024

  @Option(
    name: .customLong("partial-max-age-hours"),
    help: "Partial downloads older than this many hours are removed (default 72).")
  var partialMaxAgeHours = 72.0

  @Option(help: "How many devices to push to at a time (1-64, default 4).")
  var parallel = 4

  @Option(
    name: .customLong("restart-timeout"),
    help: "Seconds to wait for a device to come back after ACTIVATE's restart (default 60).")
  var restartTimeout = 60.0

  @Option(
    name: .customLong("trial-timeout"),
    help: "Seconds to wait after the restart for the device to confirm or roll back (default 300).")
  var trialTimeout = 300.0

  @Option(
    name: .customLong("max-poll"),
    help: "The longest wait between polls whatever the server asks, in seconds (default 3600).")
  var maxPoll = 3600.0

  @Flag(help: "Run one poll cycle and exit.")
  var once = false

  @Flag(
    name: .customLong("until-idle"),
    help: "Run poll cycles until one finds no action for any device, then exit (for scripts and tests).")
  var untilIdle = false

  @Option(help: ArgumentHelp("Link conditions (simulated link only).", discussion: LinkConditions.help))
  var link: String?

  @Option(help: "The Bluetooth adapter to use (default hci0).")
  var adapter = "hci0"

  @Flag(name: .shortAndLong, help: "Log each device's conversation too.")
  var verbose = false

  func validate() throws {
    let lower = server.lowercased()
    guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), URL(string: server)?.host != nil else {
      throw ValidationError("--server \(server): give the server's http:// or https:// address")
    }
    try OptionChecks.count(parallel, "--parallel", 1...64)
    try OptionChecks.seconds(restartTimeout, "--restart-timeout", maximum: 24 * 3600)
    try OptionChecks.seconds(trialTimeout, "--trial-timeout", maximum: 7 * 24 * 3600)
    try OptionChecks.seconds(maxPoll, "--max-poll", maximum: 7 * 24 * 3600)
    if let scan { try OptionChecks.seconds(scan, "--scan", maximum: 600) }
    if device.isEmpty, devicesFile == nil, socketDirectory == nil, scan == nil {
      throw ValidationError("name the devices: --device, --devices FILE, --socket-dir DIR or --scan SECONDS")
    }
    try OptionChecks.count(maxArtifactMiB, "--max-artifact-mib", 1...4096)
    try OptionChecks.count(maxPartialMiB, "--max-partial-mib", 0...1 << 20)
    guard partialMaxAgeHours.isFinite, partialMaxAgeHours > 0, partialMaxAgeHours <= 365 * 24 else {
      throw ValidationError(
        "--partial-max-age-hours \(partialMaxAgeHours): give hours more than 0, at most 8760")
    }
    if once, untilIdle { throw ValidationError("give --once or --until-idle, not both") }
    if tenant.isEmpty || tenant.contains("/") {
      throw ValidationError("--tenant \(tenant): no '/' and not empty")
    }
  }

  func run() throws {
    // Checked here rather than in validate(): ArgumentParser validates before it reports an unknown
    // option, and a missing file would hide the misspelled flag.
    if let caFile, !FileSystem.exists(caFile) { throw ValidationError("--ca-file \(caFile): no such file") }
    let authorization = try GatewayCredentials.read(tokenFile: tokenFile, targetTokens: targetTokens)
    let state: String
    do {
      state = try GatewayStateDirectory.path(
        given: stateDirectory, home: ProcessInfo.processInfo.environment["HOME"])
    } catch {
      throw ValidationError("\(error)")
    }
    let cache: ArtifactCache
    let journal: GatewayJournal
    let bindingStore = BindingStore(directory: state)
    var bindings: TargetBindings
    do {
      cache = try ArtifactCache(
        directory: "\(state)/artifacts",
        limits: ArtifactCache.Limits(
          maxArtifactBytes: maxArtifactMiB << 20, maxPartialBytes: maxPartialMiB << 20,
          maxPartialAge: .milliseconds(Int64(partialMaxAgeHours * 3_600_000))))
      journal = try GatewayJournal(directory: state)
      bindings = try bindingStore.load()
      if !rebind.isEmpty {
        for serial in rebind where !bindings.forget(serial) {
          FileHandle.standardError.write(Data("--rebind \(serial): no binding to forget\n".utf8))
        }
        try bindingStore.save(bindings)
      }
    } catch {
      throw ValidationError("--state-dir \(state): \(error)")
    }
    var logger = Logger(label: "otactl.gateway") { JournalLogHandler.standardError(label: $0) }
    logger.logLevel = verbose ? .debug : .info
    let ddi = DDIClient(
      server: server, tenant: tenant, authorization: authorization,
      http: CurlHTTPClient(settings: HTTPSettings(caFile: caFile)))
    let linkOptions = try LinkOptions.parse(
      ["--adapter", adapter] + (link.map { ["--link", $0] } ?? []) + (verbose ? ["--verbose"] : []))
    let push = GatewayPush(
      configuration: { version, simulated in
        SenderConfiguration(
          version: version, responseTimeout: .seconds(5),
          restartTimeout: .milliseconds(Int64(restartTimeout * 1000)), maxConnectAttempts: 8,
          trialTimeout: .milliseconds(Int64(trialTimeout * 1000)),
          // The device's word that it runs the version is no reason to send nothing: the gateway
          // pushes only when the device has not proven it (Gateway.plan).
          force: true,
          linkLayerDataLength: simulated
            ? try linkOptions.conditions().dataLength : WriteSize.assumedDataLength)
      }, options: linkOptions, dataPath: .auto, parallel: parallel)
    let gateway = Gateway(
      settings: Gateway.Settings(
        defaultSleep: .seconds(60),
        sleepBounds: .seconds(1)...(.milliseconds(Int64(maxPoll * 1000)))),
      ddi: ddi, cache: cache, journal: journal, bindings: bindings, bindingStore: bindingStore,
      logger: logger,
      probe: { GatewayProbe.facts(of: $0, options: linkOptions, fallback: $1) },
      probeSeveral: { GatewayProbe.severalFacts(of: $0, options: linkOptions, parallel: parallel) },
      push: push)
    logger.info("serving devices for \(server) (tenant \(tenant)), state in \(state)")
    var cycles = 0
    let clock = ContinuousClock()
    while true {
      let began = clock.now
      gateway.devices = try currentDevices(logger)
      let (sleep, busy) = gateway.cycle()
      cycles += 1
      if once || (untilIdle && !busy) { break }
      // The server's sleep is the time between two polls of a target, and each target was polled
      // as the cycle began: a cycle that pushed for longer than that polls again at once.
      let left = DDIPollingInterval.remaining(of: sleep, after: clock.now - began)
      Thread.sleep(
        forTimeInterval: Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18)
    }
    let (ok, failed) = (gateway.results.success, gateway.results.failure)
    logger.info(
      "after \(cycles) poll(s): \(ok + failed) result(s) reported, \(ok) success, \(failed) failure; \(push.totals.bytesOnAir) bytes on air in \(push.totals.pushes) push(es)"
    )
  }

  /// The devices this cycle: named, listed, in the socket directory, and found by the scan.
  private func currentDevices(_ logger: Logger) throws -> [String] {
    var devices = device
    if let devicesFile { devices += try DeviceList.read(devicesFile) }
    if let socketDirectory {
      let names = (try? FileSystem.directoryEntries(socketDirectory)) ?? []
      devices += names.filter { $0.hasSuffix(".sock") }.sorted().map { "\(socketDirectory)/\($0)" }
    }
    if let scan {
      do {
        let found = try BlueZScanner.scan(
          connection: try DBusConnection(bus: .system), adapter: adapter,
          duration: .milliseconds(Int64(scan * 1000)))
        devices += found.map(\.address)
      } catch {
        logger.error(
          "scanning on \(adapter) failed: \(error.message). Is bluetoothd running, the adapter on?")
      }
    }
    var seen = Set<String>()
    return devices.filter { seen.insert(DeviceList.identity($0)).inserted }
  }
}
