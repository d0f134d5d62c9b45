import OTADevice
import OTALink
import OTAWire
import Testing

@Suite struct DaemonConfigurationTests {
  @Test func readsAFullConfiguration() throws {
    let configuration = try DaemonConfiguration(
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
    ).validated()
    #expect(configuration.slotA == "/var/lib/otad/a.img" && configuration.slotB == "/dev/mmcblk0p3")
    #expect(configuration.slotCapacity == 16 << 20)
    #expect(configuration.stateDirectory == "/var/lib/otad" && configuration.socket == "/run/otad.sock")
    #expect(configuration.factoryVersion == Version(major: 1, minor: 2, revision: 0))
    #expect(configuration.link.mtu == 185 && configuration.link.connectionInterval == .milliseconds(30))
    #expect(configuration.windowCapacity == 128 * 1024 && configuration.windowGrace == .milliseconds(250))
    #expect(configuration.logLevel == .debug)
  }

  @Test(arguments: [
    ("[slots]\nsize = 3", "unknown key 'size' in [slots]"),
    ("[slot]\na = \"x\"", "unknown key 'slot'"),
    ("[slots]\ncapacity = \"lots\"", "not a size"),
    ("[log]\nlevel = \"loud\"", "level 'loud'"),
    ("[link]\nconditions = \"mtu=9\"", "[link] conditions"),
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

  @Test func validationNamesWhatIsMissing() throws {
    var configuration = DaemonConfiguration()
    #expect(throws: ConfigurationError.self) { try configuration.validated() }
    configuration.slotA = "/a"
    configuration.slotB = "/a"
    do {
      _ = try configuration.validated()
    } catch {
      #expect(error.description.contains("the same path"))
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
