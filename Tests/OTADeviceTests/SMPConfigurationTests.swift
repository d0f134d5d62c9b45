import OTAConfiguration
import OTADaemon
import OTASystem
import Testing

/// SMP over UDP is off unless the configuration names an address.
@Suite struct SMPConfigurationTests {
  @Test func udpIsOffByDefault() throws {
    // [S-UDP-1]
    #expect(DaemonConfiguration().smpUDP == nil)
    #expect(try DaemonConfiguration(toml: "[log]\nlevel = \"info\"").smpUDP == nil)
  }

  @Test func theSMPSectionNamesAnAddressAndPort() throws {
    let configuration = try DaemonConfiguration(toml: "[smp]\nudp = \"127.0.0.1:1337\"")
    #expect(configuration.smpUDP == UDPAddress(octets: [127, 0, 0, 1], port: 1337))
    #expect(configuration.smpUDP?.description == "127.0.0.1:1337")
  }

  @Test(arguments: [
    "localhost:1337", "127.0.0.1", "127.0.0.1:70000", "1.2.3:5", "1.2.3.4.5:6", "256.0.0.1:1", ":1",
  ])
  func anythingButIPv4AndAPortIsRefused(text: String) {
    #expect(throws: ConfigurationError.self) { try DaemonConfiguration(toml: "[smp]\nudp = \"\(text)\"") }
    #expect(UDPAddress(parsing: text) == nil)
  }

  /// SMP over Bluetooth is on by default (an MCUmgr phone app needs no setup; the pairing rule of
  /// the OTA service holds for it), off with `bluetooth = false`.
  @Test func bluetoothIsOnByDefaultAndCanBeTurnedOff() throws {
    // [S-BLE-2]
    #expect(DaemonConfiguration().smpBluetooth)
    #expect(try DaemonConfiguration(toml: "[smp]\nudp = \"127.0.0.1:1337\"").smpBluetooth)
    #expect(try DaemonConfiguration(toml: "[smp]\nbluetooth = false").smpBluetooth == false)
    #expect(throws: ConfigurationError.self) { try DaemonConfiguration(toml: "[smp]\nbluetooth = \"no\"") }
  }

  @Test func unknownKeysInTheSectionAreErrors() {
    #expect(throws: ConfigurationError.self) { try DaemonConfiguration(toml: "[smp]\nport = 1337") }
  }
}
