import OTAWire
import TOMLKit

/// The `[boot]` part of the configuration: the bootloader backend, how many boots a trial gets, how a
/// trial proves itself, and how the device restarts. docs/OTAD.md lists every key.
public struct BootConfiguration: Equatable, Sendable {
  public enum Backend: String, Equatable, Sendable, CaseIterable {
    /// otad is its own bootloader: a symlink names the slot that runs (the simulated device, app slots).
    case file
    /// Raspberry Pi firmware A/B: autoboot.txt and `reboot "0 tryboot"`.
    case tryboot
    /// U-Boot environment (RAUC's BOOT_ORDER / BOOT_x_LEFT) through fw_printenv/fw_setenv.
    case uboot
    /// GRUB environment (RAUC's ORDER / x_OK / x_TRY) through grub-editenv.
    case grub
  }

  /// Where the boot stage runs.
  public enum Stage: String, Equatable, Sendable {
    /// Every start of `otad run` is a boot: the simulated device and app-slot mode.
    case daemon
    /// `otad boot` runs once per boot (otad-boot.service) and `otad run` only serves.
    case separate
  }

  public enum Restart: Equatable, Sendable, CustomStringConvertible {
    /// otad executes itself again: the simulated device and app-slot mode.
    case reexec
    /// `systemctl reboot` (a backend may ask for its own, e.g. `reboot "0 tryboot"`).
    case reboot
    /// Any command line, run with /bin/sh -c.
    case command(String)

    public var description: String {
      switch self {
      case .reexec: "reexec"
      case .reboot: "reboot"
      case .command(let line): line
      }
    }
  }

  public var backend = Backend.file
  public var attempts: UInt8 = 3
  public var stage = Stage.daemon
  public var trial = TrialPolicy(confirmTimeout: .seconds(600))
  public var restart = Restart.reexec
  /// The file backend's symlink to the running slot; nil: `<state directory>/current`.
  public var link: String?
  public var trybootDirectory = "/boot/firmware"
  public var trybootPartitions = SlotPair(a: 2, b: 3)
  public var trybootNode = "/proc/device-tree/chosen/bootloader"
  public var cmdline = "/proc/cmdline"
  public var grubEnvironment = "/boot/grub/grubenv"

  public init() {}

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
    if let uboot = try Config.section(table, "uboot", keys: ["cmdline"]) {
      cmdline = try Config.string(uboot, "cmdline", in: "boot.uboot") ?? cmdline
    }
    if let grub = try Config.section(table, "grub", keys: ["environment", "cmdline"]) {
      grubEnvironment = try Config.string(grub, "environment", in: "boot.grub") ?? grubEnvironment
      cmdline = try Config.string(grub, "cmdline", in: "boot.grub") ?? cmdline
    }
  }

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
