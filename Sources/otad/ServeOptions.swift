import ArgumentParser
import OTAConfiguration
import OTADaemon
import OTALink
import OTASocketLink

/// How `otad run` serves: the link (the simulated one or Bluetooth), the protocols beside the OTA
/// service, the window, and the identity the device gives centrals.
struct ServeOptions: ConfigurationOptions {
  @Option(help: "The simulated device's address: a Unix socket path that otactl --device names.")
  var socket: String?

  @Option(help: "Serve over Bluetooth through bluetoothd on this adapter (e.g. hci0) instead of --socket.")
  var adapter: String?

  @Option(help: "The name the device advertises over Bluetooth (default BlueOTA).")
  var name: String?

  @Flag(name: .customLong("require-pairing"), help: "Accept writes only over an encrypted, bonded link.")
  var requirePairing = false

  @Flag(name: .customLong("no-l2cap"), help: "Take data over GATT only: no L2CAP data channel.")
  var noL2CAP = false

  @Option(
    name: .customLong("l2cap-psm"),
    help: "The L2CAP data channel's PSM, 0x80 to 0xFF (default: a dynamic one the kernel picks).")
  var l2capPSM: String?

  @Option(
    name: .customLong("smp-udp"),
    help: ArgumentHelp(
      "Also serve SMP (MCUmgr) over UDP on ADDR:PORT, e.g. 127.0.0.1:1337. Off by default: no pairing, no authentication.",
      valueName: "addr:port"))
  var smpUDP: String?

  @Flag(
    name: .customLong("no-smp-bluetooth"),
    help:
      "Do not offer the SMP (MCUmgr) service over Bluetooth (on by default; --require-pairing holds for it).")
  var noSMPBluetooth = false

  @Flag(
    name: .customLong("legacy-dfu"),
    help: "Also serve Nordic's Legacy DFU over Bluetooth (docs/NORDIC-DFU.md).")
  var legacyDFU = false

  @Flag(
    name: .customLong("secure-dfu"),
    help: "Also serve Nordic's Secure DFU over Bluetooth (docs/NORDIC-DFU.md); needs --secure-dfu-key.")
  var secureDFU = false

  @Option(
    name: .customLong("secure-dfu-key"),
    help: ArgumentHelp(
      "The P-256 public key (PEM) Secure DFU init packets must be signed by: nrfutil keys display --key pk --format pem KEY.",
      valueName: "pem"))
  var secureDFUKey: String?

  @Option(help: ArgumentHelp("Link conditions on the device's side.", discussion: LinkConditions.help))
  var link: String?

  @Option(help: "Window capacity, e.g. 64KiB: how far past the committed offset chunks are taken.")
  var window: String?

  @Option(help: "The device's serial, its identity (default: derived from /etc/machine-id).")
  var serial: String?

  @Option(help: "The hardware model the device says it is, e.g. rpi4 (default: default).")
  var model: String?

  @Option(
    name: .customLong("hardware-revision"), help: "The hardware's revision, e.g. 1.0 (default: default).")
  var hardwareRevision: String?

  func apply(to configuration: inout DaemonConfiguration) throws {
    if let socket { configuration.socket = socket }
    if let adapter { configuration.bluezAdapter = adapter }
    if let name { configuration.localName = name }
    if requirePairing { configuration.requirePairing = true }
    if noL2CAP { configuration.l2cap = false }
    if let l2capPSM {
      let number = l2capPSM.hasPrefix("0x") ? Int(l2capPSM.dropFirst(2), radix: 16) : Int(l2capPSM)
      configuration.l2capPSM = try DaemonConfiguration.l2capPSM(number ?? -1)
    }
    if let smpUDP { configuration.smpUDP = try DaemonConfiguration.udpAddress(smpUDP) }
    if noSMPBluetooth { configuration.smpBluetooth = false }
    if legacyDFU { configuration.legacyDFU = true }
    if secureDFU { configuration.secureDFU = true }
    if let secureDFUKey { configuration.secureDFUKeyFile = secureDFUKey }
    if let link {
      configuration.linkConditions.append(link)
      _ = try DaemonSetup.linkConditions(configuration)
    }
    if let window {
      configuration.windowCapacity = UInt32(clamping: try DaemonConfiguration.byteSize(window))
    }
    if let serial { configuration.serial = try DaemonConfiguration.identityValue(serial, key: "--serial") }
    if let model { configuration.model = try DaemonConfiguration.identityValue(model, key: "--model") }
    if let hardwareRevision {
      configuration.hardwareRevision = try DaemonConfiguration.identityValue(
        hardwareRevision, key: "--hardware-revision")
    }
  }
}
