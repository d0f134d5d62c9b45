import Logging
import OTALink
import OTASocketLink
import OTASystem
import OTAWire
import TOMLKit

/// Everything `otad` needs to run: where the slots and the state live, the link, and the logging.
/// Comes from a TOML file (`otad run --config FILE`), flags, or both (flags win).
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
  /// The device's side of the link: by default it takes any MTU up to 517, as BlueZ does.
  public var link = LinkConditions(mtu: ATTMTU.maximum.value)
  /// Over Bluetooth, also take data on an LE L2CAP channel (docs/PROTOCOL.md).
  public var l2cap = true
  /// The channel's PSM: 0 for a dynamic one the kernel picks, else 0x80 to 0xFF.
  public var l2capPSM: UInt16 = 0
  public var windowCapacity: UInt32 = 64 * 1024
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

  public init() {}

  /// Reads the TOML configuration. Unknown keys are errors: a typo must not pass silently.
  public init(toml text: String) throws(ConfigurationError) {
    let table: TOMLTable
    do {
      table = try TOMLTable(string: text)
    } catch {
      throw ConfigurationError("not valid TOML: \(error)")
    }
    try Self.onlyKeys(
      table, ["slots", "state", "device", "bluez", "link", "transfer", "log", "boot", "trust", "smp"],
      in: "the file"
    )
    if let trust = try Self.section(table, "trust", keys: ["keys", "allow-downgrade"]) {
      try self.trust.read(trust)
    }
    if let boot = try Self.section(
      table, "boot",
      keys: [
        "backend", "attempts", "stage", "health-check", "confirm", "health-timeout", "confirm-timeout",
        "restart",
        "link",
        "tryboot", "uboot", "grub",
      ])
    {
      try self.boot.read(boot)
    }
    if let bluez = try Self.section(table, "bluez", keys: ["adapter", "name", "require-pairing"]) {
      bluezAdapter = try Self.string(bluez, "adapter", in: "bluez")
      if let name = try Self.string(bluez, "name", in: "bluez") { localName = name }
      if let value = bluez["require-pairing"] {
        guard let flag = value.bool else {
          throw ConfigurationError("[bluez] require-pairing must be true or false")
        }
        requirePairing = flag
      }
    }
    if let slots = try Self.section(table, "slots", keys: ["a", "b", "capacity"]) {
      slotA = try Self.path(slots, "a", in: "slots")
      slotB = try Self.path(slots, "b", in: "slots")
      slotCapacity = try Self.string(slots, "capacity", in: "slots").map(Self.byteSize)
    }
    if let state = try Self.section(table, "state", keys: ["directory"]) {
      stateDirectory = try Self.path(state, "directory", in: "state")
    }
    if let device = try Self.section(table, "device", keys: ["socket", "factory-version"]) {
      socket = try Self.path(device, "socket", in: "device")
      if let text = try Self.string(device, "factory-version", in: "device") {
        factoryVersion = try Self.version(text)
      }
    }
    if let link = try Self.section(table, "link", keys: ["conditions", "l2cap", "l2cap-psm"]) {
      if let spec = try Self.string(link, "conditions", in: "link") {
        do {
          self.link = try LinkConditions(spec: spec, base: self.link)
        } catch {
          throw ConfigurationError("[link] conditions: \(error)")
        }
      }
      if let value = link["l2cap"] {
        guard let flag = value.bool else { throw ConfigurationError("[link] l2cap must be true or false") }
        l2cap = flag
      }
      if let value = link["l2cap-psm"] {
        guard let number = value.int else { throw ConfigurationError("[link] l2cap-psm must be a number") }
        l2capPSM = try Self.l2capPSM(number)
      }
    }
    if let transfer = try Self.section(table, "transfer", keys: ["window", "grace"]) {
      if let window = try Self.string(transfer, "window", in: "transfer") {
        windowCapacity = UInt32(clamping: try Self.byteSize(window))
      }
      if let grace = try Self.string(transfer, "grace", in: "transfer") {
        windowGrace = try Self.duration(grace)
      }
    }
    if let smp = try Self.section(table, "smp", keys: ["udp", "bluetooth"]) {
      if let text = try Self.string(smp, "udp", in: "smp") { smpUDP = try Self.udpAddress(text) }
      if let value = smp["bluetooth"] {
        guard let flag = value.bool else { throw ConfigurationError("[smp] bluetooth must be true or false") }
        smpBluetooth = flag
      }
    }
    if let log = try Self.section(table, "log", keys: ["level"]),
      let level = try Self.string(log, "level", in: "log")
    {
      guard let parsed = Logger.Level(rawValue: level) else {
        throw ConfigurationError(
          "[log] level '\(level)': use trace, debug, info, notice, warning, error or critical")
      }
      logLevel = parsed
    }
  }

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

  /// `400ms`, `60s`, `10min`, `2h`.
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

  static func version(_ text: String) throws(ConfigurationError) -> Version {
    guard let version = Version(text: text) else {
      throw ConfigurationError("'\(text)' is not a version like 1.2.3 or 1.2.3+4")
    }
    return version
  }

  static func onlyKeys(_ table: TOMLTable, _ keys: Set<String>, in place: String)
    throws(ConfigurationError)
  {
    for key in table.keys where !keys.contains(key) {
      throw ConfigurationError(
        "unknown key '\(key)' in \(place) (known: \(keys.sorted().joined(separator: ", ")))")
    }
  }

  static func section(_ table: TOMLTable, _ name: String, keys: Set<String>)
    throws(ConfigurationError)
    -> TOMLTable?
  {
    guard let value = table[name] else { return nil }
    guard let section = value.table else { throw ConfigurationError("[\(name)] must be a table") }
    try onlyKeys(section, keys, in: "[\(name)]")
    return section
  }

  /// A path: a string, never a number (`a = 5` is a typo, not a file named "5"), never empty.
  static func path(_ table: TOMLTable, _ key: String, in section: String) throws(ConfigurationError)
    -> String?
  {
    guard let value = table[key] else { return nil }
    guard let text = value.string, !text.isEmpty else {
      throw ConfigurationError(
        "[\(section)] \(key) must be a path in quotes, e.g. \(key) = \"/var/lib/otad/...\"")
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

  static func string(_ table: TOMLTable, _ key: String, in section: String) throws(ConfigurationError)
    -> String?
  {
    guard let value = table[key] else { return nil }
    if let text = value.string { return text }
    if let number = value.int { return String(number) }
    throw ConfigurationError("[\(section)] \(key) must be a string")
  }
}

public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
