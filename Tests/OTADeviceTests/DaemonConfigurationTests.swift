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
    // [SEC-CHECK-15]
    do {
      _ = try DaemonConfiguration(toml: text)
      Issue.record("accepted: \(text)")
    } catch {
      #expect(error.description.contains(hint), "\(error)")
    }
  }

  /// Secure DFU's key: needed when it is on, read as nrfutil writes it, refused with what to give
  /// instead when it is missing, unreadable or a private key.
  @Test func secureDFUNeedsItsPublicKey() throws {
    var configuration = DaemonConfiguration()
    #expect(try configuration.secureDFUTrust { _ in nil } == nil, "off: nothing read")
    configuration.secureDFU = true
    let files = [
      "pub.pem": SecureDFUFixtures.trustedKey,
      "private.pem": "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIA==\n-----END EC PRIVATE KEY-----\n",
    ]
    for (file, complaint) in [
      (nil, "Secure DFU needs the public key its init packets are signed with"),
      ("missing.pem", "[nordic] secure-dfu-key: cannot read missing.pem"),
      ("private.pem", "it is a private key; give the device only the public half"),
    ] {
      configuration.secureDFUKeyFile = file
      #expect {
        _ = try configuration.secureDFUTrust { files[$0] }
      } throws: { error in
        "\(error)".contains(complaint)
      }
    }
    configuration.secureDFUKeyFile = "pub.pem"
    configuration.nordicHardwareVersion = 52
    #expect(try configuration.secureDFUTrust { files[$0] }?.hardwareVersion == 52)
  }

  /// A bad `[link] conditions` is refused where the spec is parsed: otad reads the file and the flag
  /// through `LinkConditions(spec:)` (its message then names `[link] conditions`), not by the TOML reader.
  @Test func nordicAndFaultsSectionsAreReadAndCheckedLikeTheRest() throws {
    let configuration = try DaemonConfiguration(
      toml: """
        [nordic]
        legacy-dfu = true
        device-type = 0x52
        device-revision = 3
        secure-dfu = true
        secure-dfu-key = "/etc/otad/nordic-dfu.pub.pem"
        hardware-version = 52
        [faults]
        allow = true
        set = ["drop-link after=37%", "refuse at=activate status=busy times=always"]
        """)
    #expect(configuration.legacyDFU && configuration.nordicDeviceType == 0x52)
    #expect(configuration.nordicDeviceRevision == 3)
    #expect(configuration.secureDFU && configuration.secureDFUKeyFile == "/etc/otad/nordic-dfu.pub.pem")
    #expect(configuration.nordicHardwareVersion == 52)
    #expect(configuration.faultsAllowed)
    #expect(
      configuration.faults.map(\.description) == [
        "drop-link after=37% times=1", "refuse status=busy at=activate times=always",
      ])
    for (text, complaint) in [
      ("[nordic]\ndevice-type = 0xFFFF", "[nordic] device-type must be a number from 0 to 0xFFFE"),
      ("[nordic]\nlegacy-dfu = 1", "[nordic] legacy-dfu must be true or false"),
      ("[nordic]\nsecure-dfu = \"yes\"", "[nordic] secure-dfu must be true or false"),
      ("[nordic]\nhardware-version = -1", "[nordic] hardware-version must be a number from 0 to 0xFFFFFFFF"),
      ("[nordic]\nbuttonless = true", "unknown key 'buttonless' in [nordic]"),
      ("[faults]\nset = [\"explode\"]", "[faults] set: 'explode': no fault 'explode'"),
      ("[faults]\nset = \"drop-link after=1\"", "[faults] set must be a list of faults"),
      ("[faults]\nallow = \"yes\"", "[faults] allow must be true or false"),
    ] {
      #expect {
        _ = try DaemonConfiguration(toml: text)
      } throws: { error in
        "\(error)".contains(complaint)
      }
    }
  }

  @Test func linkConditionsAreParsedByTheLinksBuilder() throws {
    let configuration = try DaemonConfiguration(toml: "[link]\nconditions = \"mtu=9\"")
    #expect(configuration.linkConditions == ["mtu=9"])
    #expect(throws: LinkSpecError.self) { try LinkConditions(spec: "mtu=9") }
  }

  @Test func parsingNamesWhatIsMissingInOrder() throws {
    // [SEC-LIMIT-2]
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
