import Logging
import OTADaemon
import OTAFaults
import OTAWire
import TOMLKit

/// The TOML file read into `DaemonConfiguration`. Unknown keys are errors: a typo must not pass
/// silently. The only place that reads TOML.
extension DaemonConfiguration {
  /// Reads the TOML configuration. Unknown keys are errors: a typo must not pass silently.
  public init(toml text: String) throws(ConfigurationError) {
    self.init()
    let table: TOMLTable
    do {
      table = try TOMLTable(string: text)
    } catch {
      throw ConfigurationError("not valid TOML: \(error)")
    }
    try Self.onlyKeys(
      table,
      [
        "slots", "state", "device", "bluez", "link", "transfer", "log", "boot", "trust", "smp", "faults",
        "activation",
        "nordic",
      ],
      in: "the file"
    )
    if let trust = try Self.section(table, "trust", keys: ["keys", "allow-downgrade", "decryption-key"]) {
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
    if let device = try Self.section(
      table, "device", keys: ["socket", "factory-version", "model", "hardware-revision", "serial"])
    {
      socket = try Self.path(device, "socket", in: "device")
      if let text = try Self.string(device, "factory-version", in: "device") {
        factoryVersion = try Self.version(text)
      }
      if let text = try Self.string(device, "model", in: "device") {
        model = try Self.identityValue(text, key: "[device] model")
      }
      if let text = try Self.string(device, "hardware-revision", in: "device") {
        hardwareRevision = try Self.identityValue(text, key: "[device] hardware-revision")
      }
      if let text = try Self.string(device, "serial", in: "device") {
        serial = try Self.identityValue(text, key: "[device] serial")
      }
    }
    if let link = try Self.section(table, "link", keys: ["conditions", "l2cap", "l2cap-psm"]) {
      if let spec = try Self.string(link, "conditions", in: "link") {
        linkConditions.append(spec)
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
    if let activation = try Self.section(
      table, "activation", keys: ["require-consent", "max-deferral", "lock-dir", "notify"])
    {
      if let value = activation["require-consent"] {
        guard let flag = value.bool else {
          throw ConfigurationError("[activation] require-consent must be true or false")
        }
        requireConsent = flag
      }
      if let text = try Self.string(activation, "max-deferral", in: "activation") {
        maxDeferral = try Self.duration(text)
      }
      if let path = try Self.path(activation, "lock-dir", in: "activation") { lockDirectory = path }
      if let command = try Self.string(activation, "notify", in: "activation") { activationNotify = command }
    }
    if let smp = try Self.section(table, "smp", keys: ["udp", "bluetooth"]) {
      if let text = try Self.string(smp, "udp", in: "smp") { smpUDP = try Self.udpAddress(text) }
      if let value = smp["bluetooth"] {
        guard let flag = value.bool else { throw ConfigurationError("[smp] bluetooth must be true or false") }
        smpBluetooth = flag
      }
    }
    if let nordic = try Self.section(
      table, "nordic",
      keys: [
        "legacy-dfu", "device-type", "device-revision", "secure-dfu", "secure-dfu-key", "hardware-version",
      ])
    {
      for key in ["legacy-dfu", "secure-dfu"] {
        guard let value = nordic[key] else { continue }
        guard let flag = value.bool else { throw ConfigurationError("[nordic] \(key) must be true or false") }
        if key == "legacy-dfu" { legacyDFU = flag } else { secureDFU = flag }
      }
      if let path = try Self.string(nordic, "secure-dfu-key", in: "nordic") { secureDFUKeyFile = path }
      if let number = nordic["hardware-version"] {
        guard let value = number.int, (0...Int(UInt32.max)).contains(value) else {
          throw ConfigurationError("[nordic] hardware-version must be a number from 0 to 0xFFFFFFFF")
        }
        nordicHardwareVersion = UInt32(value)
      }
      for (key, number) in [
        ("device-type", nordic["device-type"]), ("device-revision", nordic["device-revision"]),
      ] {
        guard let number else { continue }
        guard let value = number.int, (0...0xFFFE).contains(value) else {
          throw ConfigurationError("[nordic] \(key) must be a number from 0 to 0xFFFE (0xFFFF means any)")
        }
        if key == "device-type" {
          nordicDeviceType = UInt16(value)
        } else {
          nordicDeviceRevision = UInt16(value)
        }
      }
    }
    if let faults = try Self.section(table, "faults", keys: ["allow", "set"]) {
      try readFaults(faults)
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

  /// `[faults] allow = true` and `set = ["drop-link after=37%", ...]` (docs/APP-TESTING.md).
  private mutating func readFaults(_ section: TOMLTable) throws(ConfigurationError) {
    if let value = section["allow"] {
      guard let flag = value.bool else { throw ConfigurationError("[faults] allow must be true or false") }
      faultsAllowed = flag
    }
    guard let value = section["set"] else { return }
    guard let list = value.array else {
      throw ConfigurationError("[faults] set must be a list of faults, e.g. set = [\"drop-link after=37%\"]")
    }
    for item in list {
      guard let line = item.string else { throw ConfigurationError("[faults] set: each fault is a string") }
      do {
        faults.append(try Fault(parsing: line))
      } catch {
        throw ConfigurationError("[faults] set: '\(line)': \(error)")
      }
    }
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

  static func string(_ table: TOMLTable, _ key: String, in section: String) throws(ConfigurationError)
    -> String?
  {
    guard let value = table[key] else { return nil }
    if let text = value.string { return text }
    if let number = value.int { return String(number) }
    throw ConfigurationError("[\(section)] \(key) must be a string")
  }
}
