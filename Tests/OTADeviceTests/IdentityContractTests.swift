import Logging
import OTAConfiguration
import OTALink
import OTASocketLink
import OTASystem
import OTATestSupport
import Testing

@testable import OTADaemon

/// docs/PROTOCOL.md's identity strings end to end over the simulated link: otad's `DeviceService`,
/// configured from TOML, serves them through a `SocketPeripheral`, and a `SocketCentral` in the same
/// process reads them with `readIdentity`; an older device (without them) reads as unknown.
@Suite struct IdentityContractTests {
  /// A device and a central on one socket; the test passes the time.
  struct Pair {
    let peripheral: SocketPeripheral
    let central: SocketCentral
    let service: DeviceService
    let directory: TemporaryDirectory

    init(configuration: DaemonConfiguration, spec: String = "mtu=23") throws {
      directory = try TemporaryDirectory(label: "identity")
      let conditions = try LinkConditions(spec: spec)
      peripheral = try SocketPeripheral(path: directory.path("otad.sock"), conditions: conditions)
      central = SocketCentral(path: directory.path("otad.sock"), conditions: conditions)
      service = DeviceService(
        host: try DeviceFixture(slotCapacity: 4096).makeHost(), link: peripheral,
        logger: Logger(label: "test"),
        identity: configuration.identity(
          machineIDPath: directory.path("no-machine-id"), logger: Logger(label: "test")))
    }

    /// Connects, asks for the identity and turns both ends until the central has it.
    func readIdentity() throws -> DeviceIdentity? {
      central.connect(now: .zero)
      var now = Duration.zero
      for _ in 0..<400 {
        let deviceReady = try Poller.wait(
          for: peripheral.descriptors, writable: peripheral.writeDescriptors, timeout: .milliseconds(5))
        _ = try peripheral.service(readable: deviceReady, now: now) { service.value(of: $0, mtu: $1) }
        let centralReady = try Poller.wait(for: central.descriptors, timeout: .milliseconds(5))
        for event in central.service(readable: centralReady, now: now) {
          switch event {
          case .connected: central.readIdentity()
          case .identity(let identity): return identity
          case .disconnected(let reason), .connectFailed(let reason): Issue.record("\(reason)")
          default: break
          }
        }
        now += .milliseconds(10)
      }
      return nil
    }
  }

  @Test func aCentralReadsTheConfiguredSerialModelAndHardwareRevision() throws {
    // [P-GATT-10] [P-GATT-11] [P-GATT-12]
    let configuration = try DaemonConfiguration(
      toml: """
        [device]
        model = "rpi4"
        hardware-revision = "1.0"
        serial = "0328b1e8c62c4027bc6dab2d336a8fcd"
        """)
    // At MTU 23 a read carries 22 bytes: the 32-character serial takes a long read.
    let pair = try Pair(configuration: configuration)
    defer { pair.directory.remove() }
    #expect(
      try pair.readIdentity()
        == DeviceIdentity(serial: "0328b1e8c62c4027bc6dab2d336a8fcd", model: "rpi4", hardwareRevision: "1.0"))
  }

  @Test func theDefaultsAreDefaultAndAnUnknownSerialWithoutAMachineID() throws {
    // [P-GATT-10] [P-GATT-11] [P-GATT-12]
    let pair = try Pair(configuration: DaemonConfiguration(), spec: "mtu=247")
    defer { pair.directory.remove() }
    #expect(
      try pair.readIdentity()
        == DeviceIdentity(serial: "unknown", model: "default", hardwareRevision: "default"))
  }

  @Test func anOlderDeviceWithoutThemReadsAsUnknown() throws {
    let pair = try Pair(configuration: DaemonConfiguration())
    defer { pair.directory.remove() }
    pair.peripheral.readable = [.info, .firmwareRevision, .blockHashes]
    #expect(try pair.readIdentity() == DeviceIdentity())
  }

  @Test func theSerialIsTheMachinesAppSpecificIDWhenNoneIsConfigured() throws {
    // [P-GATT-11]
    let directory = try TemporaryDirectory(label: "machine-id")
    defer { directory.remove() }
    // The vector of MachineAppSpecificIDTests: what `systemd-id128 machine-id --app-specific=…` printed.
    let path = try directory.write(Array("3d1219c7c4c5404aaa1f6d2a48adfda4\n".utf8), "machine-id")
    let logger = Logger(label: "test")
    var configuration = DaemonConfiguration()
    #expect(
      configuration.identity(machineIDPath: path, logger: logger)
        == DeviceIdentity(
          serial: "0328b1e8c62c4027bc6dab2d336a8fcd", model: "default", hardwareRevision: "default"))
    configuration.serial = "SN-1"
    #expect(configuration.identity(machineIDPath: path, logger: logger).serial == "SN-1", "configured wins")
    let empty = try directory.write([], "empty")
    #expect(DaemonConfiguration().identity(machineIDPath: empty, logger: logger).serial == "unknown")
    #expect(
      DaemonConfiguration().identity(machineIDPath: directory.path("missing"), logger: logger).serial
        == "unknown")
  }

  @Test func theConfigurationTakesTheIdentityKeys() throws {
    let configuration = try DaemonConfiguration(
      toml: """
        [device]
        model = "blueota-sim"
        hardware-revision = "2"
        serial = 12345
        """)
    #expect(configuration.model == "blueota-sim" && configuration.hardwareRevision == "2")
    #expect(configuration.serial == "12345")
    let defaults = DaemonConfiguration()
    #expect(defaults.model == "default" && defaults.hardwareRevision == "default" && defaults.serial == nil)
  }

  @Test(arguments: [
    ("[device]\nserial = \"\"", "[device] serial ''"),
    ("[device]\nserial = \"has space\"", "[device] serial 'has space'"),
    ("[device]\nmodel = \"a/b\"", "[device] model 'a/b'"),
    ("[device]\nhardware-revision = \"\(String(repeating: "x", count: 65))\"", "[device] hardware-revision"),
    ("[device]\nmodel = \"caf\\u00e9\"", "[device] model 'café'"),
    ("[device]\nmodel = \"tab\\there\"", "[device] model"),
    ("[device]\nmodel = true", "[device] model must be a string"),
    ("[device]\nserials = \"x\"", "unknown key 'serials' in [device]"),
  ])
  func refusesABadIdentityNamingItsKey(_ text: String, _ hint: String) {
    do {
      _ = try DaemonConfiguration(toml: text)
      Issue.record("accepted: \(text)")
    } catch {
      #expect(error.description.contains(hint), "\(error)")
    }
  }

  @Test func identityValuesAreOneTo64PrintableASCIIWithoutSpacesOrSlashes() throws {
    #expect(
      try DaemonConfiguration.identityValue(String(repeating: "x", count: 64), key: "--serial").count == 64)
    #expect(try DaemonConfiguration.identityValue("rpi4-B_1.0+x:y", key: "--model") == "rpi4-B_1.0+x:y")
    #expect(
      throws: ConfigurationError(
        "--serial 'a b': use 1 to 64 printable ASCII characters, without spaces or '/'")
    ) { try DaemonConfiguration.identityValue("a b", key: "--serial") }
  }
}
