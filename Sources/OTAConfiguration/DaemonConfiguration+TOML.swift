import Logging
import OTADaemon
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
