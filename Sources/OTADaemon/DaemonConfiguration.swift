import Logging
import OTABoot
import OTAFaults
import OTAReceiverHost
import OTASystem
import OTAWire

/// Everything `otad` needs to run: where the slots and the state live, the link, and the logging.
/// Comes from a TOML file (`otad run --config FILE`, read by OTAConfiguration), flags, or both
/// (flags win).
public struct DaemonConfiguration: Equatable, Sendable {
  public var slotA: String?
  public var slotB: String?
  /// Capacity of a slot that is a regular file (block devices use their size).
  public var slotCapacity: UInt64?
  public var stateDirectory: String?
  /// Where the simulated device listens (a Unix socket path): the device's address for otactl.
  public var socket: String?
  /// Serve through bluetoothd on this adapter (e.g. hci0) instead of the simulated link.
  public var bluezAdapter: String?
  /// The name the device advertises over BLE.
  public var localName = "BlueOTA"
  /// Writes need an encrypted, bonded link (encrypt-authenticated-write).
  public var requirePairing = false
  /// The simulated link's conditions on the device's side, as given (`[link] conditions`, then
  /// `--link`), each laid over the one before: whoever builds the simulated link parses them (otad's
  /// run command). By default it takes any MTU up to 517, as BlueZ does.
  public var linkConditions: [String] = []
  /// Over Bluetooth, also take data on an LE L2CAP channel (docs/PROTOCOL.md).
  public var l2cap = true
  /// The channel's PSM: 0 for a dynamic one the kernel picks, else 0x80 to 0xFF.
  public var l2capPSM: UInt16 = 0
  /// The most bytes one WINDOW commits (one CRC read-back, one fdatasync): 256 KiB, so that a
  /// delta of zstd frames (4-5 % of the image on the air) is not bound by WINDOW round trips.
  public var windowCapacity: UInt32 = 256 * 1024
  public var windowGrace: Duration = .milliseconds(400)
  /// The version a device that was never updated runs (slot A).
  public var factoryVersion = Version(major: 1, minor: 0, revision: 0)
  public var logLevel: Logger.Level = .info
  public var boot = BootConfiguration()
  public var trust = TrustConfiguration()
  /// Serve SMP (MCUmgr) over UDP on this address: off unless set. SMP over UDP has no pairing and no
  /// authentication: anyone who reaches the port can upload, test and reset (docs/SMP.md).
  public var smpUDP: UDPAddress?
  /// Serve SMP (MCUmgr) over Bluetooth: the SMP service in the GATT application, on by default (an
  /// MCUmgr phone app needs no setup). It writes the slots as the OTA service does, under the same
  /// pairing rule (`requirePairing`).
  public var smpBluetooth = true
  /// What the device says it is, in the Device Information Service (docs/PROTOCOL.md): the hardware
  /// model and its revision ("default" when not stated, as hawkBit-style update servers take a
  /// target without hardware), and the serial, its identity (nil: derived from /etc/machine-id,
  /// `identity(machineIDPath:logger:)`). Each is checked by `identityValue`.
  public var model = "default"
  public var hardwareRevision = "default"
  public var serial: String?
  /// The device's say over activations (docs/OTAD.md, "The device has a say"): whether an update
  /// waits for its owner's consent, how long a security update may be held back in all, and where
  /// applications put their update locks.
  public var requireConsent = false
  public var maxDeferral: Duration = .seconds(7 * 24 * 3600)
  public var lockDirectory = "/run/blueota/locks"
  /// A command (run by /bin/sh -c) told of each change of the kept activation: an update waits for
  /// consent, is held, went ahead, was declined (OTAD_ACTIVATION, OTAD_HOLD, OTAD_VERSION, ...).
  public var activationNotify: String?
  /// Faults on demand (docs/APP-TESTING.md) may be set: at start (`faults`) and through the fault
  /// control (`otad fault`). Off by default: a product must not ship with them reachable.
  public var faultsAllowed = false
  /// The faults set at each start (`[faults] set`, `--fault`); refused unless `faultsAllowed`.
  public var faults: [Fault] = []
  /// Serve Nordic's Legacy DFU over Bluetooth (docs/NORDIC-DFU.md), off by default; the init
  /// packet's device type and revision must be these (nil: any).
  public var legacyDFU = false
  public var nordicDeviceType: UInt16?
  public var nordicDeviceRevision: UInt16?
  /// Serve Nordic's Secure DFU over Bluetooth, off by default: init packets must be signed by the key
  /// in `secureDFUKeyFile` (PEM) and, when set, be for `nordicHardwareVersion`.
  public var secureDFU = false
  public var secureDFUKeyFile: String?
  public var nordicHardwareVersion: UInt32?

  public init() {}

  /// Everything needed to run, parsed: see `DaemonSettings`.
  public func settings() throws(ConfigurationError) -> DaemonSettings {
    try DaemonSettings(parsing: self)
  }

  /// Checks the [boot] choices that only make sense together.
  public func validatedBoot() throws(ConfigurationError) -> DaemonConfiguration {
    // The U-Boot script counts BOOT_x_LEFT with setexpr (hexadecimal) but tests it as decimal.
    if boot.backend == .uboot, boot.attempts > 9 {
      throw ConfigurationError("[boot] attempts: the U-Boot scheme counts up to 9, not \(boot.attempts)")
    }
    return self
  }

  // MARK: Values

  /// `4096`, `64KiB`, `16MiB`, `1GiB` (also `K`, `M`, `G`, `KB`, `MB`: powers of 1024 throughout).
  public static func byteSize(_ text: String) throws(ConfigurationError) -> UInt64 {
    let trimmed = text.trimmingSpaces
    let digits = trimmed.prefix { $0.isNumber }
    let unit = trimmed.dropFirst(digits.count).lowercased()
    let scale: UInt64? =
      switch unit {
      case "", "b": 1
      case "k", "kb", "kib": 1 << 10
      case "m", "mb", "mib": 1 << 20
      case "g", "gb", "gib": 1 << 30
      default: nil
      }
    guard let number = UInt64(digits), let scale,
      number.multipliedReportingOverflow(by: scale).overflow == false
    else {
      throw ConfigurationError("'\(text)' is not a size like 4096, 64KiB or 16MiB")
    }
    return number * scale
  }

  /// `400ms`, `60s`, `10min`, `2h`, `7d`.
  public static func duration(_ text: String) throws(ConfigurationError) -> Duration {
    let lower = text.trimmingSpaces.lowercased()
    let digits = lower.prefix { $0.isNumber }
    let unit = String(lower.dropFirst(digits.count)).trimmingSpaces
    guard let number = Int64(digits), number > 0, number < 1 << 40 else {
      throw ConfigurationError("'\(text)' is not a duration like 400ms, 60s or 10min")
    }
    switch unit {
    case "ms": return .milliseconds(number)
    case "s": return .seconds(number)
    case "min": return .seconds(number * 60)
    case "h": return .seconds(number * 3600)
    case "d": return .seconds(number * 24 * 3600)
    default: throw ConfigurationError("'\(text)' is not a duration like 400ms, 60s or 10min")
    }
  }

  /// `127.0.0.1:1337`: an IPv4 address and a port, as `--smp-udp` and `[smp] udp` take them.
  public static func udpAddress(_ text: String) throws(ConfigurationError) -> UDPAddress {
    guard let address = UDPAddress(parsing: text.trimmingSpaces) else {
      throw ConfigurationError("'\(text)' is not an IPv4 address and port like 127.0.0.1:1337")
    }
    return address
  }

  public static func version(_ text: String) throws(ConfigurationError) -> Version {
    guard let version = Version(text: text) else {
      throw ConfigurationError("'\(text)' is not a version like 1.2.3 or 1.2.3+4")
    }
    return version
  }

  /// A model, hardware revision or serial: 1 to 64 printable ASCII characters, no space and no '/'
  /// (an update server puts them in names and paths). `key` names where it came from in the
  /// complaint (`[device] serial`, `--serial`).
  public static func identityValue(_ text: String, key: String) throws(ConfigurationError) -> String {
    let bytes = Array(text.utf8)
    guard (1...64).contains(bytes.count),
      bytes.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "/") })
    else {
      throw ConfigurationError(
        "\(key) '\(text)': use 1 to 64 printable ASCII characters, without spaces or '/'")
    }
    return text
  }

  /// An LE PSM for the data channel: 0 (the kernel picks) or a dynamic one, 0x80 to 0xFF.
  public static func l2capPSM(_ number: Int) throws(ConfigurationError) -> UInt16 {
    guard number == 0 || (0x80...0xFF).contains(number) else {
      throw ConfigurationError("the L2CAP PSM must be 0 (the kernel picks) or 0x80 to 0xFF, not \(number)")
    }
    return UInt16(number)
  }
}

public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

extension BootConfiguration {
  /// `auto` (the daemon coming up, or the health check, confirms) or `manual` (mark-good or CONFIRM).
  public static func manual(_ text: String) throws(ConfigurationError) -> Bool {
    switch text {
    case "auto": return false
    case "manual": return true
    default: throw ConfigurationError("[boot] confirm '\(text)': use auto or manual")
    }
  }

  /// `reexec`, `reboot`, or a command line.
  public static func restart(_ text: String) throws(ConfigurationError) -> Restart {
    switch text.trimmingSpaces {
    case "": throw ConfigurationError("[boot] restart is empty: use reexec, reboot or a command line")
    case "reexec": return .reexec
    case "reboot": return .reboot
    default: return .command(text)
    }
  }
}

extension String {
  /// Without leading and trailing spaces (config and flag values).
  var trimmingSpaces: String {
    String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}

extension DaemonConfiguration {
  /// What the host weighs an activation against, as configured.
  public var activationPolicy: ActivationPolicy {
    ActivationPolicy(requireConsent: requireConsent, maxDeferral: maxDeferral.components.seconds)
  }
}
