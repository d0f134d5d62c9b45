import OTAConfiguration
import OTADaemon
import OTALink
import OTASocketLink
import OTAStorage
import OTAWire
import Testing

@Suite struct DaemonConfigurationTests {
  @Test func readsAFullConfiguration() throws {
    let settings = try DaemonConfiguration(
      toml: """
        [slots]
        a = "/var/lib/otad/a.img"
        b = "/dev/mmcblk0p3"
        capacity = "16MiB"

        [state]
        directory = "/var/lib/otad"

        [device]
        socket = "/run/otad.sock"
        factory-version = "1.2.0"

        [link]
        conditions = "mtu=185,interval=30ms"

        [transfer]
        window = "128KiB"
        grace = "250ms"

        [log]
        level = "debug"
        """
    ).settings()
    let layout = settings.layout
    #expect(layout.slots == SlotPair(a: "/var/lib/otad/a.img", b: "/dev/mmcblk0p3"))
    #expect(layout.slotCapacity == 16 << 20 && layout.stateDirectory == "/var/lib/otad")
    #expect(layout.bootLockPath == "/var/lib/otad/boot.lock")
    #expect(settings.link == .socket(path: "/run/otad.sock"))
    let configuration = settings.configuration
    #expect(configuration.factoryVersion == Version(major: 1, minor: 2, revision: 0))
    // The link's conditions are carried as written; otad parses them where it builds the simulated link.
    #expect(configuration.linkConditions == ["mtu=185,interval=30ms"])
    let link = try LinkConditions(spec: "mtu=185,interval=30ms")
    #expect(link.mtu == 185 && link.connectionInterval == .milliseconds(30))
    #expect(configuration.windowCapacity == 128 * 1024 && configuration.windowGrace == .milliseconds(250))
    #expect(configuration.logLevel == .debug)
  }

  @Test(arguments: [
    ("[slots]\nsize = 3", "unknown key 'size' in [slots]"),
    ("[slot]\na = \"x\"", "unknown key 'slot'"),
    ("[slots]\ncapacity = \"lots\"", "not a size"),
    ("[log]\nlevel = \"loud\"", "level 'loud'"),
    ("[device]\nfactory-version = \"one\"", "not a version"),
    ("not toml at all [", "not valid TOML"),
  ])
  func refusesMistakesWithTheirPlace(_ text: String, _ hint: String) {
    do {
      _ = try DaemonConfiguration(toml: text)
      Issue.record("accepted: \(text)")
    } catch {
      #expect(error.description.contains(hint), "\(error)")
    }
  }

  /// A bad `[link] conditions` is refused where the spec is parsed: otad reads the file and the flag
  /// through `LinkConditions(spec:)` (its message then names `[link] conditions`), not by the TOML reader.
  @Test func linkConditionsAreParsedByTheLinksBuilder() throws {
    let configuration = try DaemonConfiguration(toml: "[link]\nconditions = \"mtu=9\"")
    #expect(configuration.linkConditions == ["mtu=9"])
    #expect(throws: LinkSpecError.self) { try LinkConditions(spec: "mtu=9") }
  }

  @Test func parsingNamesWhatIsMissingInOrder() throws {
    var configuration = DaemonConfiguration()
    #expect(throws: ConfigurationError("both slots are needed: --slot-a and --slot-b (or [slots] a and b)")) {
      try DeviceLayout(parsing: configuration)
    }
    configuration.slotA = "/a"
    configuration.slotB = "/a"
    #expect(throws: ConfigurationError("slot A and slot B are the same path: /a")) {
      try configuration.settings()
    }
    configuration.slotB = "/b"
    #expect(throws: ConfigurationError("a state directory is needed: --state-dir (or [state] directory)")) {
      try DeviceLayout(parsing: configuration)
    }
    configuration.stateDirectory = "/var/lib/otad"
    // The layout is all that status and mark-good need; only `run` needs a link.
    #expect(try DeviceLayout(parsing: configuration).slots == SlotPair(a: "/a", b: "/b"))
    #expect(throws: ConfigurationError.self) { try configuration.settings() }
    configuration.socket = "/run/otad.sock"
    #expect(try configuration.settings().link == .socket(path: "/run/otad.sock"))
    configuration.bluezAdapter = "hci0"
    #expect(
      try configuration.settings().link == .bluetooth(adapter: "hci0"), "Bluetooth wins over the socket")
    configuration.windowCapacity = 16
    #expect(throws: ConfigurationError("the window must be 64 bytes to 16 MiB, not 16")) {
      try configuration.settings()
    }
  }

  @Test func sizesUsePowersOf1024() throws {
    #expect(try DaemonConfiguration.byteSize("4096") == 4096)
    #expect(try DaemonConfiguration.byteSize("64KiB") == 65536)
    #expect(try DaemonConfiguration.byteSize("2M") == 2 << 20)
    #expect(try DaemonConfiguration.byteSize("1GiB") == 1 << 30)
    #expect(throws: ConfigurationError.self) { try DaemonConfiguration.byteSize("99999999999999999999G") }
  }
}
