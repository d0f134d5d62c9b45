import OTABoot
import OTADaemon
import OTAWire
import TOMLKit

/// The `[boot]` table read into `BootConfiguration`.
extension BootConfiguration {
  mutating func read(_ table: TOMLTable) throws(ConfigurationError) {
    typealias Config = DaemonConfiguration
    if let name = try Config.string(table, "backend", in: "boot") {
      guard let backend = Backend(rawValue: name) else {
        throw ConfigurationError("[boot] backend '\(name)': use file, tryboot, uboot or grub")
      }
      self.backend = backend
    }
    if let value = table["attempts"] {
      guard let number = value.int, (1...255).contains(number) else {
        throw ConfigurationError("[boot] attempts must be a number from 1 to 255")
      }
      attempts = UInt8(number)
    }
    if let name = try Config.string(table, "stage", in: "boot") {
      guard let stage = Stage(rawValue: name) else {
        throw ConfigurationError("[boot] stage '\(name)': use daemon or separate")
      }
      self.stage = stage
    }
    if let command = try Config.string(table, "health-check", in: "boot") {
      trial.healthCheck = command.isEmpty ? nil : command
    }
    if let text = try Config.string(table, "confirm", in: "boot") {
      trial.manual = try Self.manual(text)
    }
    if let text = try Config.string(table, "health-timeout", in: "boot") {
      trial.healthTimeout = try Config.duration(text)
    }
    if let text = try Config.string(table, "confirm-timeout", in: "boot") {
      trial.confirmTimeout = text == "never" ? nil : try Config.duration(text)
    }
    if let text = try Config.string(table, "restart", in: "boot") {
      restart = try Self.restart(text)
    }
    link = try Config.string(table, "link", in: "boot") ?? link
    if let tryboot = try Config.section(
      table, "tryboot", keys: ["boot-directory", "partition-a", "partition-b", "bootloader"])
    {
      trybootDirectory = try Config.string(tryboot, "boot-directory", in: "boot.tryboot") ?? trybootDirectory
      trybootNode = try Config.string(tryboot, "bootloader", in: "boot.tryboot") ?? trybootNode
      for (slot, key) in [(SlotID.a, "partition-a"), (SlotID.b, "partition-b")] {
        guard let value = tryboot[key] else { continue }
        guard let number = value.int, (1...63).contains(number) else {
          throw ConfigurationError("[boot.tryboot] \(key) must be a partition number from 1 to 63")
        }
        trybootPartitions[slot] = number
      }
      guard trybootPartitions.a != trybootPartitions.b else {
        throw ConfigurationError("[boot.tryboot] partition-a and partition-b are the same partition")
      }
    }
    if let uboot = try Config.section(table, "uboot", keys: ["cmdline", "config"]) {
      cmdline = try Config.string(uboot, "cmdline", in: "boot.uboot") ?? cmdline
      ubootConfig = try Config.path(uboot, "config", in: "boot.uboot") ?? ubootConfig
    }
    if let grub = try Config.section(table, "grub", keys: ["environment", "cmdline"]) {
      grubEnvironment = try Config.string(grub, "environment", in: "boot.grub") ?? grubEnvironment
      cmdline = try Config.string(grub, "cmdline", in: "boot.grub") ?? cmdline
    }
  }
}
