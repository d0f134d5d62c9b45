import ArgumentParser
import Foundation
import OTABlueZ
import OTACentral
import OTALink
import OTASender
import OTASocketLink
import OTASystem
import OTATrust
import OTAWire

extension WriteSize: ExpressibleByArgument {
  public init?(argument: String) { self.init(argument) }
}

struct PushCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "push",
    abstract: "Push an image: PREPARE (or resume), TRANSFER, VALIDATE, ACTIVATE, VERIFY.",
    discussion: """
      An MCUboot image carries its version; a raw image needs --version. A push that was cut off
      resumes from the last window the device committed. After ACTIVATE the device restarts into a
      trial of the new version; the push succeeds only when the new version runs confirmed (the
      device's health check passed, or --confirm). A rollback fails the push (exit code 7) with the
      device's reason. If the device already runs this version confirmed, nothing is sent (--force
      sends it again); if it runs it on trial, the push waits for that trial's verdict. A device
      may defer the activation (an update lock, its owner's consent): the push then ends with the
      image validated and the activation kept by the device (exit code 16). --activate-at and
      --window leave the activation to the device, in a window (SCHEDULE).
      """)

  @Argument(help: "The image file (raw, or MCUboot format).")
  var image: String

  @Option(
    help: ArgumentHelp(
      "A device to update: a Bluetooth address or advertised name, or the simulated link's socket path. Give it several times to update several devices at once.",
      discussion: DeviceOptions.deviceHelp.discussion))
  var device: [String] = []

  @Option(
    name: .customLong("devices"),
    help: ArgumentHelp(
      "A file of devices to update, one per line ('#' starts a comment), with any --device given.",
      valueName: "file"))
  var devicesFile: String?

  @Option(
    help:
      "With several devices: how many links at a time (default 4: two already fill one radio's air; more overlap the restarts and trial waits). The rest wait their turn."
  )
  var parallel = 4

  @OptionGroup var options: LinkOptions

  @Option(help: "The image's version, e.g. 1.4.0 (required for a raw image).")
  var version: Version?

  @Flag(
    name: .customLong("no-activate"), help: "Stop after VALIDATE: leave the image ready in the inactive slot."
  )
  var noActivate = false

  @Flag(help: "Activate for good, without a trial boot.")
  var permanent = false

  @Option(
    name: .customLong("activate-at"),
    help: ArgumentHelp(
      "After VALIDATE, leave the activation to the device from this time on (SCHEDULE): 2026-11-30T02:00:00Z, 2026-11-30T02:00 (local time), or from now +2h, +30m. The device activates on its own once nothing holds it.",
      valueName: "time"),
    transform: ScheduleOptions.time)
  var activateAt: ActivationTime?

  @Option(
    help: ArgumentHelp(
      "With --activate-at: the end of the window; past it the device no longer activates (the image stays validated).",
      valueName: "time"),
    transform: ScheduleOptions.time)
  var until: ActivationTime?

  @Option(
    help: ArgumentHelp(
      "After VALIDATE, leave the activation to the device in the next daily window that has not ended (SCHEDULE): HH:MM-HH:MM in this machine's time zone, or with Z in UTC (02:00-04:00Z). Inside it now: from now.",
      valueName: "HH:MM-HH:MM"),
    transform: ScheduleOptions.window)
  var window: DailyWindow?

  @Flag(
    help:
      "Confirm the new version from here once it runs on trial, instead of waiting for the device's verdict.")
  var confirm = false

  @Flag(
    help:
      "Send the image even when the device already runs its version, confirmed (by default nothing is sent).")
  var force = false

  @Option(
    name: .customLong("trial-timeout"),
    help:
      "Seconds to wait after the restart for the device to confirm the trial or roll it back (default 300).")
  var trialTimeout = 300.0

  @Option(
    name: .customLong("restart-timeout"),
    help:
      "Seconds to wait for the device to come back after ACTIVATE's restart (default 60; a board that reboots through slow firmware may need more)."
  )
  var restartTimeout = 60.0

  @Option(
    name: .customLong("max-reconnects"), help: "Connection attempts in a row without progress (default 8).")
  var maxReconnects = 8

  @Option(help: "Seconds a quick request may go unanswered before the link is dropped and retried.")
  var timeout = 5.0

  @Flag(
    name: .customLong("no-missing-ranges"),
    help:
      "Never turn on the device's missing-range reports: fail and resend whole windows from their first gap, as a central from before them."
  )
  var noMissingRanges = false

  @Option(
    name: .customLong("write-size"),
    help: ArgumentHelp(
      "Value bytes per data write: auto (whole link-layer packets: 495 at MTU ≥ 498 with a 251-byte data length) or a number (capped at MTU − 3).",
      valueName: "auto|N"))
  var writeSize: WriteSize = .auto

  @Option(
    help: ArgumentHelp(
      "An earlier release the device may run, or a directory of them: when one is exactly the running image (Info's size and CRC32), only the difference is sent.",
      valueName: "file|directory"))
  var base: String?

  @Option(
    name: .customLong("delta-plan"),
    help: ArgumentHelp(
      "A plan of this image against one of the --base files (otactl delta): used instead of planning again.",
      valueName: "file"))
  var deltaPlan: String?

  @Flag(help: "Send plain chunks only: no compression, no delta, whatever the device supports.")
  var full = false

  @Flag(
    name: .customLong("dry-run"),
    help: "Connect, read Info, and tell what a push would send (delta, compressed or plain); change nothing.")
  var dryRun = false

  @Option(
    name: .customLong("data-path"),
    help: ArgumentHelp(
      "How image data travels: gatt (write commands), l2cap (the device's L2CAP channel, or fail), or auto (the channel when the device offers one, else GATT; a channel that fails falls back to GATT).",
      valueName: "gatt|l2cap|auto"))
  var dataPath: DataPath = .auto

  @Option(
    help: ArgumentHelp(
      "Write the push as a trace (Chrome's Trace Event Format, for Perfetto or chrome://tracing) to this file.",
      valueName: "file"))
  var trace: String?

  @Option(
    name: .customLong("announce-crc"),
    help: ArgumentHelp(
      "Announce this CRC32 (hex) instead of the image's: tests a device's VALIDATE.", visibility: .hidden)
  )
  var announceCRC: String?

  /// The checks of the options alone; what needs a file (--devices) is checked when the push runs,
  /// after ArgumentParser has reported any unknown option.
  func validate() throws {
    if device.isEmpty, devicesFile == nil { _ = try targets() }
    try DeviceList.refuseDuplicates(device)
    try Self.checkTrace(trace, devices: device.count)
    try OptionChecks.count(parallel, "--parallel", 1...64)
    try OptionChecks.seconds(timeout, "--timeout", maximum: 3600)
    try OptionChecks.seconds(trialTimeout, "--trial-timeout", maximum: 7 * 24 * 3600)
    try OptionChecks.seconds(restartTimeout, "--restart-timeout", maximum: 24 * 3600)
    try OptionChecks.count(maxReconnects, "--max-reconnects", 0...1000)
    if full, base != nil {
      throw ValidationError("--full sends plain chunks: it cannot use --base")
    }
    // Flags that only mean something when the push activates the image.
    if noActivate, permanent {
      throw ValidationError(
        "--permanent activates without a trial boot, --no-activate stops before ACTIVATE: give one of them")
    }
    if noActivate, confirm {
      throw ValidationError(
        "--confirm confirms the new version once activated, --no-activate stops before ACTIVATE: give one of them"
      )
    }
    if try schedule() != nil {
      if noActivate {
        throw ValidationError(
          "--activate-at and --window leave the activation to the device, --no-activate stops before it: give one of them"
        )
      }
      if confirm {
        throw ValidationError(
          "--confirm confirms the new version once it runs, --activate-at and --window leave the activation to the device (confirm later with otactl confirm): give one of them"
        )
      }
    }
    if let announceCRC, UInt32(announceCRC, radix: 16) == nil {
      throw ValidationError("--announce-crc \(announceCRC): give 8 hex digits")
    }
  }

  func run() throws {
    let bytes = try readImage()
    let imageVersion = try resolveVersion(bytes)
    let targets = try self.targets()
    try Self.checkTrace(trace, devices: targets.count)
    var bases = try base.map { try BaseImages.load($0) } ?? []
    if let deltaPlan { bases = try BaseImages.attach(deltaPlan, to: bases, image: bytes) }
    if targets.count > 1 {
      try runFleet(targets, image: bytes, version: imageVersion, bases: bases)
      return
    }
    let target = targets[0]
    let simulated = LinkOptions.isSimulated(target)
    let conditions = try options.conditions()
    let link = try options.openLink(to: target, dataPath: dataPath, linkFacts: true)
    let configuration = try senderConfiguration(version: imageVersion, simulated: simulated)
    let reporter = ProgressReporter(style: options.json ? .json : isatty(2) != 0 ? .terminal : .plain)
    reporter.start(
      image: image, size: bytes.count, version: imageVersion,
      over: simulated ? "\(conditions)" : "Bluetooth (\(options.adapter) to \(target))")
    reporter.baseNames = bases.map(\.name)
    let recorder = trace.map {
      TraceFile(
        path: $0,
        trace: PushTrace(image: image, version: "\(imageVersion)", size: bytes.count, at: TraceFile.now))
    }
    let session = PushSession(
      image: bytes, configuration: configuration, bases: bases,
      blockDigest: { BlockDigest.truncatedSHA256($0) }, link: link, logger: options.logger(),
      onProgress: { progress, report in
        reporter.update(progress, report)
        recorder?.trace.record(progress, report, at: TraceFile.now)
      })
    let outcome: SenderOutcome
    do {
      outcome = try session.run()
    } catch {
      recorder?.write()
      throw error
    }
    recorder?.trace.finish(outcome, at: TraceFile.now)
    recorder?.write()
    reporter.finish(
      outcome, elapsed: session.elapsed, size: bytes.count, air: simulated ? session.air(conditions) : nil,
      connectToReady: session.connectToReady, version: imageVersion,
      path: session.pathFigures(simulated: simulated))
    switch outcome {
    case .succeeded: break
    case .activationKept(let kept, _): if kept.exitStatus != .success { throw ExitCode(kept.exitStatus) }
    case .failed(let failure, _): throw ExitCode(failure.exitStatus)
    }
  }

  /// The scheduled activation the options ask for (nil: ACTIVATE at once, or none).
  func schedule() throws -> ActivationSchedule? {
    try ScheduleOptions.schedule(at: activateAt, until: until, window: window, atFlag: "--activate-at")
  }

  /// The image's bytes, or exit code 10 with the reason.
  func readImage() throws -> [UInt8] {
    guard let bytes = try? FileSystem.readFile(image) else {
      StandardStreams.writeError("otactl: cannot read the image \(image)\n")
      throw ExitCode(.imageUnusable)
    }
    guard !bytes.isEmpty else {
      StandardStreams.writeError("otactl: the image \(image) is empty\n")
      throw ExitCode(.imageUnusable)
    }
    return bytes
  }

  /// What every device's sender is told, from the flags.
  func senderConfiguration(version: Version, simulated: Bool) throws -> SenderConfiguration {
    var configuration = SenderConfiguration(
      version: version, activate: !noActivate, permanent: permanent,
      responseTimeout: .milliseconds(Int64(timeout * 1000)),
      restartTimeout: .milliseconds(Int64(restartTimeout * 1000)), maxConnectAttempts: maxReconnects,
      confirm: confirm, trialTimeout: .milliseconds(Int64(trialTimeout * 1000)), force: force,
      writeSize: writeSize,
      linkLayerDataLength: simulated ? try options.conditions().dataLength : WriteSize.assumedDataLength,
      missingRangeReports: !noMissingRanges, operations: !full, dryRun: dryRun,
      schedule: try schedule().map { try ScheduleOptions.resolve($0, permanent: permanent) })
    if let announceCRC {
      guard let value = UInt32(announceCRC, radix: 16) else {
        throw ValidationError("--announce-crc: not hex")
      }
      configuration.announcedCRC = value
    }
    return configuration
  }

  /// The devices to update, from --device and --devices, in that order; each at most once.
  static func checkTrace(_ trace: String?, devices: Int) throws {
    if devices > 1, trace != nil {
      throw ValidationError("--trace records one push: give one device, or leave --trace out")
    }
  }

  func targets() throws -> [String] {
    var targets = device
    if let devicesFile { targets += try DeviceList.read(devicesFile) }
    guard !targets.isEmpty else {
      throw ValidationError(
        "give the device to update with --device (several times, or --devices FILE, for several)")
    }
    try DeviceList.refuseDuplicates(targets)
    return targets
  }

  private func resolveVersion(_ bytes: [UInt8]) throws -> Version {
    if let layout = try? MCUbootImageLayout(parsing: bytes) {
      let own = layout.header.version
      if let version, version != own {
        throw ValidationError(
          "the image says version \(own); --version \(version) would be refused at VALIDATE")
      }
      return own
    }
    guard let version else {
      throw ValidationError("\(image) is a raw image (no MCUboot header): give its version with --version")
    }
    return version
  }
}
