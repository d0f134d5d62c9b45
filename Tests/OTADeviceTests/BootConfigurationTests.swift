import Foundation
import OTABoot
import OTAConfiguration
import OTADaemon
import OTAStorage
import OTATestSupport
import OTAWire
import Testing

@Suite struct BootConfigurationTests {
  static let root = RepositoryRoot.url

  func read(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
    try DaemonConfiguration(toml: text)
  }

  @Test func readsEveryBootKey() throws {
    let configuration = try read(
      """
      [boot]
      backend = "grub"
      attempts = 2
      stage = "separate"
      health-check = "/usr/bin/check --fast"
      confirm = "manual"
      health-timeout = "90s"
      confirm-timeout = "2h"
      restart = "systemctl restart app.service"
      [boot.grub]
      environment = "/boot/efi/grubenv"
      cmdline = "/tmp/cmdline"
      """)
    let boot = configuration.boot
    #expect(boot.backend == .grub && boot.attempts == 2 && boot.stage == .separate)
    #expect(boot.trial.healthCheck == "/usr/bin/check --fast" && boot.trial.manual)
    #expect(boot.trial.healthTimeout == .seconds(90) && boot.trial.confirmTimeout == .seconds(7200))
    #expect(boot.restart == .command("systemctl restart app.service"))
    #expect(boot.grubEnvironment == "/boot/efi/grubenv" && boot.cmdline == "/tmp/cmdline")
    let layout = DeviceLayout(slots: SlotPair(a: "/a", b: "/b"), stateDirectory: "/var/lib/x")
    #expect(configuration.boot.makeBackend(for: layout).name == "grub")
  }

  @Test func theUBootToolsConfigurationIsPassedOn() throws {
    let configuration = try read(
      """
      [boot]
      backend = "uboot"
      [boot.uboot]
      cmdline = "/run/cmdline"
      config = "/etc/otad/fw_env.config"
      """)
    #expect(configuration.boot.ubootConfig == "/etc/otad/fw_env.config")
    let layout = DeviceLayout(slots: SlotPair(a: "/a", b: "/b"), stateDirectory: "/var/lib/x")
    let backend = try #require(configuration.boot.makeBackend(for: layout) as? UBootBackend)
    #expect(backend.config == "/etc/otad/fw_env.config" && backend.cmdline == "/run/cmdline")
    #expect(try read("[boot]\nbackend = \"uboot\"").boot.ubootConfig == nil, "the tools' own default")
  }

  @Test func defaultsAreTheSimulatedDevicesOwn() throws {
    let boot = try read("").boot
    #expect(boot.backend == .file && boot.attempts == 3 && boot.stage == .daemon && boot.restart == .reexec)
    #expect(boot.trial.healthCheck == nil && !boot.trial.manual && boot.trial.confirmTimeout == .seconds(600))
    var configuration = try read("[state]\ndirectory = \"/var/lib/x\"\n[slots]\na = \"/a\"\nb = \"/b\"")
    configuration.boot.link = nil
    let layout = try DeviceLayout(parsing: configuration)
    let backend = try #require(configuration.boot.makeBackend(for: layout) as? FileLinkBackend)
    #expect(backend.link == "/var/lib/x/current" && backend.slotPaths == SlotPair(a: "/a", b: "/b"))
  }

  @Test(arguments: [
    ("[boot]\nbackend = \"lilo\"", "backend 'lilo'"),
    ("[boot]\nattempts = 0", "attempts"),
    ("[boot]\nstage = \"early\"", "stage 'early'"),
    ("[boot]\nconfirm = \"maybe\"", "confirm 'maybe'"),
    ("[boot]\nhealth-timeout = \"soon\"", "duration"),
    ("[boot]\nrestart = \"\"", "restart is empty"),
    ("[boot]\nreboot = \"now\"", "unknown key 'reboot'"),
    ("[boot.tryboot]\npartition-a = 2\npartition-b = 2", "same partition"),
    ("[boot.tryboot]\npartition-a = 99", "partition number"),
    ("[boot]\nbackend = \"uboot\"\nattempts = 12", "9"),
  ])
  func badBootKeysAreNamed(_ text: String, _ expected: String) {
    #expect {
      _ = try read(text).validatedBoot()
    } throws: { error in
      "\(error)".contains(expected)
    }
  }

  /// The configurations the Raspberry Pi kit installs parse with the real parser, as documented.
  @Test func theRaspberryPiConfigurationsParse() throws {
    let tryboot = try read(
      String(contentsOf: Self.root.appendingPathComponent("Scripts/rpi/otad.toml"), encoding: .utf8))
    #expect(tryboot.boot.backend == .tryboot && tryboot.boot.stage == .separate && tryboot.boot.attempts == 1)
    #expect(tryboot.boot.trybootPartitions == SlotPair(a: 2, b: 3) && tryboot.boot.restart == .reboot)
    #expect(tryboot.bluezAdapter == "hci0" && tryboot.boot.trial.healthCheck != nil)
    let apps = try read(
      String(contentsOf: Self.root.appendingPathComponent("Scripts/rpi/otad-app-slots.toml"), encoding: .utf8)
    )
    #expect(
      apps.boot.backend == .file && apps.boot.stage == .daemon && apps.boot.link == "/var/lib/otad/current")
    #expect(try DeviceLayout(parsing: apps).slotCapacity == 64 << 20)
  }
}
