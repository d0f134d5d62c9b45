import OTAWire

/// The `[boot]` part of the configuration: the bootloader backend, how many boots a trial gets, how a
/// trial proves itself, and how the device restarts. docs/OTAD.md lists every key; OTAConfiguration
/// reads them from TOML.
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
  /// The fw_env.config the U-Boot tools read (`-c`); nil: their default, /etc/fw_env.config.
  public var ubootConfig: String?

  public init() {}
}
