import ArgumentParser
import Logging
import OTABoot
import OTAConfiguration
import OTADaemon
import OTAFaults
import OTALink
import OTANordicDFU
import OTASocketLink
import OTAStorage
import OTASystem
import OTATrust
import OTAWire

/// The options `run` and `status` share: a config file and flags that override it.
struct DaemonOptions: ParsableArguments {
  @Option(name: .long, help: "A TOML configuration file (see docs/OTAD.md); flags override it.")
  var config: String?

  @Option(name: .customLong("slot-a"), help: "Slot A: a regular file or a block device.")
  var slotA: String?

  @Option(name: .customLong("slot-b"), help: "Slot B: a regular file or a block device.")
  var slotB: String?

  @Option(help: "Capacity of a slot that is a regular file, e.g. 16MiB (block devices use their size).")
  var capacity: String?

  @Option(name: .customLong("state-dir"), help: "Where the journal and the boot state live.")
  var stateDir: String?

  @Option(help: "The simulated device's address: a Unix socket path that otactl --device names.")
  var socket: String?

  @Option(help: "Serve over Bluetooth through bluetoothd on this adapter (e.g. hci0) instead of --socket.")
  var adapter: String?

  @Option(help: "The name the device advertises over Bluetooth (default BlueOTA).")
  var name: String?

  @Flag(name: .customLong("require-pairing"), help: "Accept writes only over an encrypted, bonded link.")
  var requirePairing = false

  @Flag(name: .customLong("no-l2cap"), help: "Take data over GATT only: no L2CAP data channel.")
  var noL2CAP = false

  @Option(
    name: .customLong("l2cap-psm"),
    help: "The L2CAP data channel's PSM, 0x80 to 0xFF (default: a dynamic one the kernel picks).")
  var l2capPSM: String?

  @Option(
    name: .customLong("smp-udp"),
    help: ArgumentHelp(
      "Also serve SMP (MCUmgr) over UDP on ADDR:PORT, e.g. 127.0.0.1:1337. Off by default: no pairing, no authentication.",
      valueName: "addr:port"))
  var smpUDP: String?

  @Flag(
    name: .customLong("no-smp-bluetooth"),
    help:
      "Do not offer the SMP (MCUmgr) service over Bluetooth (on by default; --require-pairing holds for it).")
  var noSMPBluetooth = false

  @Option(help: ArgumentHelp("Link conditions on the device's side.", discussion: LinkConditions.help))
  var link: String?

  @Option(help: "Window capacity, e.g. 64KiB: how far past the committed offset chunks are taken.")
  var window: String?

  @Option(name: .customLong("factory-version"), help: "The version slot A runs on a device never updated.")
  var factoryVersion: String?

  @Option(help: "The device's serial, its identity (default: derived from /etc/machine-id).")
  var serial: String?

  @Option(help: "The hardware model the device says it is, e.g. rpi4 (default: default).")
  var model: String?

  @Option(
    name: .customLong("hardware-revision"), help: "The hardware's revision, e.g. 1.0 (default: default).")
  var hardwareRevision: String?

  @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
  var logLevel: String?

  @Option(
    name: .customLong("health-check"),
    help: "A command (run with /bin/sh -c) that decides a trial: exit 0 keeps the new firmware.")
  var healthCheck: String?

  @Option(
    help:
      "auto: a trial is confirmed by the health check, or when otad runs on it; manual: by mark-good or CONFIRM."
  )
  var confirm: String?

  @Option(name: .customLong("health-timeout"), help: "How long the health check may take, e.g. 60s.")
  var healthTimeout: String?

  @Option(
    name: .customLong("confirm-timeout"),
    help: "A trial nobody confirms by then restarts (a failed boot), e.g. 10min; 'never' to wait.")
  var confirmTimeout: String?

  @Option(help: "Boots a trial may take before it rolls back (1 to 255).")
  var attempts: UInt8?

  @Option(help: "How the device restarts: reexec, reboot, or a command line.")
  var restart: String?

  @Option(
    name: .customLong("trusted-key"),
    help: "A PEM public key images must be signed by (repeat for more; adds to [trust] keys).")
  var trustedKeys: [String] = []

  @Flag(name: .customLong("allow-downgrade"), help: "Accept images older than the confirmed one.")
  var allowDowngrade = false

  @Option(
    name: .customLong("decryption-key"),
    help:
      "The device's key for encrypted images: X25519, P-256 or RSA-2048 (PEM), AES-KW (base64); mode 0600 ([trust] decryption-key)."
  )
  var decryptionKey: String?

  @Flag(
    name: .customLong("legacy-dfu"),
    help: "Also serve Nordic's Legacy DFU over Bluetooth (docs/NORDIC-DFU.md).")
  var legacyDFU = false

  @Flag(
    name: .customLong("secure-dfu"),
    help: "Also serve Nordic's Secure DFU over Bluetooth (docs/NORDIC-DFU.md); needs --secure-dfu-key.")
  var secureDFU = false

  @Option(
    name: .customLong("secure-dfu-key"),
    help: ArgumentHelp(
      "The P-256 public key (PEM) Secure DFU init packets must be signed by: nrfutil keys display --key pk --format pem KEY.",
      valueName: "pem"))
  var secureDFUKey: String?

  @Flag(
    name: .customLong("allow-faults"),
    help: "Allow faults on demand (--fault, otad fault): for a test device only (docs/APP-TESTING.md).")
  var allowFaults = false

  @Option(
    name: .customLong("fault"),
    help: ArgumentHelp(
      "A fault to set at start, e.g. 'drop-link after=37%' (repeat for more; needs --allow-faults or [faults] allow).",
      valueName: "fault"))
  var faults: [String] = []

  /// The configuration file, then the flags on top.
  func configuration() throws -> DaemonConfiguration {
    var configuration = DaemonConfiguration()
    if let config {
      guard let bytes = try? FileSystem.readFile(config), let text = String(validating: bytes, as: UTF8.self)
      else { throw ValidationError("cannot read the configuration file \(config)") }
      do {
        configuration = try DaemonConfiguration(toml: text)
        _ = try Self.linkConditions(configuration)
      } catch let error as LinkSpecError {
        throw ValidationError("\(config): [link] conditions: \(error)")
      } catch {
        throw ValidationError("\(config): \(error)")
      }
    }
    do {
      if let slotA { configuration.slotA = slotA }
      if let slotB { configuration.slotB = slotB }
      if let capacity { configuration.slotCapacity = try DaemonConfiguration.byteSize(capacity) }
      if let stateDir { configuration.stateDirectory = stateDir }
      if let socket { configuration.socket = socket }
      if let adapter { configuration.bluezAdapter = adapter }
      if let name { configuration.localName = name }
      if requirePairing { configuration.requirePairing = true }
      if noL2CAP { configuration.l2cap = false }
      if let l2capPSM {
        let number = l2capPSM.hasPrefix("0x") ? Int(l2capPSM.dropFirst(2), radix: 16) : Int(l2capPSM)
        configuration.l2capPSM = try DaemonConfiguration.l2capPSM(number ?? -1)
      }
      if let smpUDP { configuration.smpUDP = try DaemonConfiguration.udpAddress(smpUDP) }
      if noSMPBluetooth { configuration.smpBluetooth = false }
      if let link {
        configuration.linkConditions.append(link)
        _ = try Self.linkConditions(configuration)
      }
      if let window {
        configuration.windowCapacity = UInt32(clamping: try DaemonConfiguration.byteSize(window))
      }
      if let factoryVersion {
        guard let version = Version(text: factoryVersion) else {
          throw ValidationError("--factory-version \(factoryVersion) is not a version like 1.2.3")
        }
        configuration.factoryVersion = version
      }
      if let serial { configuration.serial = try DaemonConfiguration.identityValue(serial, key: "--serial") }
      if let model { configuration.model = try DaemonConfiguration.identityValue(model, key: "--model") }
      if let hardwareRevision {
        configuration.hardwareRevision = try DaemonConfiguration.identityValue(
          hardwareRevision, key: "--hardware-revision")
      }
      if let healthCheck { configuration.boot.trial.healthCheck = healthCheck.isEmpty ? nil : healthCheck }
      if let confirm { configuration.boot.trial.manual = try BootConfiguration.manual(confirm) }
      if let healthTimeout {
        configuration.boot.trial.healthTimeout = try DaemonConfiguration.duration(healthTimeout)
      }
      if let confirmTimeout {
        configuration.boot.trial.confirmTimeout =
          confirmTimeout == "never" ? nil : try DaemonConfiguration.duration(confirmTimeout)
      }
      if let attempts {
        guard attempts > 0 else { throw ValidationError("--attempts must be 1 to 255") }
        configuration.boot.attempts = attempts
      }
      if let restart { configuration.boot.restart = try BootConfiguration.restart(restart) }
      configuration.trust.keyFiles += trustedKeys
      if allowDowngrade { configuration.trust.allowDowngrade = true }
      if let decryptionKey { configuration.trust.decryptionKeyFile = decryptionKey }
      if allowFaults { configuration.faultsAllowed = true }
      if legacyDFU { configuration.legacyDFU = true }
      if secureDFU { configuration.secureDFU = true }
      if let secureDFUKey { configuration.secureDFUKeyFile = secureDFUKey }
      for line in faults {
        do {
          configuration.faults.append(try Fault(parsing: line))
        } catch {
          throw ValidationError("--fault '\(line)': \(error)")
        }
      }
      if let logLevel {
        guard let level = Logger.Level(rawValue: logLevel) else {
          throw ValidationError(
            "--log-level \(logLevel): use trace, debug, info, notice, warning, error or critical")
        }
        configuration.logLevel = level
      }
    } catch let error as ValidationError {
      throw error
    } catch {
      throw ValidationError("\(error)")
    }
    return configuration
  }

  /// The image policy: the trusted keys read from their files.
  /// Secure DFU's key, read now so that a missing or wrong one stops the start with its reason.
  static func secureDFUTrust(_ configuration: DaemonConfiguration) throws -> SecureDFUDevice.Trust? {
    do {
      return try configuration.secureDFUTrust { path in
        (try? FileSystem.readFile(path)).flatMap { String(validating: $0, as: UTF8.self) }
      }
    } catch {
      throw ValidationError("\(error)")
    }
  }

  static func imagePolicy(_ configuration: DaemonConfiguration) throws -> ImagePolicy {
    do {
      return try configuration.trust.imagePolicy { (path: String) -> (text: String, permissions: UInt32)? in
        guard let status = (try? FileSystem.status(ofPath: path)) ?? nil,
          let text = (try? FileSystem.readFile(path)).flatMap({ String(validating: $0, as: UTF8.self) })
        else { return nil }
        return (text, status.permissions)
      }
    } catch {
      throw ValidationError("\(error)")
    }
  }

  /// The simulated link's conditions on the device's side: any MTU up to 517 (as BlueZ), with each
  /// configured spec (`[link] conditions`, then `--link`) laid over the one before.
  static func linkConditions(_ configuration: DaemonConfiguration) throws(LinkSpecError) -> LinkConditions {
    var conditions = LinkConditions(mtu: ATTMTU.maximum.value)
    for spec in configuration.linkConditions { conditions = try LinkConditions(spec: spec, base: conditions) }
    return conditions
  }

  /// Logs go to standard error at the configured level.
  static func bootstrapLogging(_ configuration: DaemonConfiguration) {
    LoggingSystem.bootstrap { label in
      var handler = StreamLogHandler.standardError(label: label)
      handler.logLevel = configuration.logLevel
      return handler
    }
  }

  /// Where the slots and the state live, as configured; a usage error (exit 64) when incomplete.
  static func layout(_ configuration: DaemonConfiguration) throws -> DeviceLayout {
    do {
      return try DeviceLayout(parsing: configuration)
    } catch {
      throw ValidationError("\(error)")
    }
  }

  /// Everything `otad run` needs, parsed; a usage error (exit 64) when something is missing.
  func settings() throws -> DaemonSettings {
    do {
      return try configuration().settings()
    } catch let error as ConfigurationError {
      throw ValidationError("\(error)")
    }
  }

  /// The daemon as configured: its storage, the one path that changes its boot state, its policy.
  static func daemon(_ configuration: DaemonConfiguration) throws -> Daemon {
    try Daemon(
      layout: layout(configuration), configuration: configuration, policy: imagePolicy(configuration))
  }

  /// Refuses slots that cannot serve (a directory, a file larger than the capacity, a missing file
  /// where the running firmware should be) and a state directory that is not a directory, before
  /// anything is created or changed.
  static func checkStorage(_ layout: DeviceLayout, boot: BootConfiguration) throws {
    let state = layout.stateDirectory
    let stateKind = (try? FileSystem.kind(ofPath: state)) ?? nil
    let stateExists = stateKind != nil
    if let stateKind, stateKind != .directory {
      throw ValidationError(
        "the state directory \(state) is not a directory: remove that file or give another path "
          + "(--state-dir or [state] directory)")
    }
    do {
      try layout.checkSlots(boot: boot, stateExists: stateExists)
    } catch {
      let slot = error.slotPath == layout.slots.b && layout.slots.a != layout.slots.b ? "b" : "a"
      throw ValidationError("slot \(slot.uppercased()): \(error) (--slot-\(slot) or [slots] \(slot))")
    }
  }
}
