import OTADBus
import OTALink

/// A call the central's machine waits for the answer to: what it was for, so the answer is read
/// by meaning, not by method name.
public enum BlueZCall: Hashable, Sendable {
  case setDiscoveryFilter
  case startDiscovery
  /// StopDiscovery of a discovery that found nothing yet, to start a fresh one once it answers.
  case endDiscoveryForAFreshOne
  /// GetManagedObjects, for devices BlueZ already knows.
  case listDevices
  /// Properties.GetAll of a device whose RSSI changed before the machine knew its properties.
  case deviceProperties(DBusObjectPath)
  case connect(DBusObjectPath)
  /// Properties.GetAll of the device just connected: whether its services are resolved already.
  case checkServicesResolved(DBusObjectPath)
  /// GetManagedObjects, for the OTA characteristics under the connected device.
  case listCharacteristics
  case startNotify
  case acquireWrite
  /// WriteValue of a command (type request) on the control point.
  case writeControl
  /// WriteValue of a data chunk (type command), when AcquireWrite was refused.
  case writeData
  /// ReadValue of Info at an offset: one step of the long read.
  case readInfo(offset: Int)
  /// ReadValue of the running slot's block hashes at an offset: one step of its long read.
  case readBlockHashes(offset: Int)
  /// ReadValue of one of the Device Information Service's identity strings (BlueZ reads it whole).
  case readIdentity(Characteristic)

  /// The D-Bus method, for logs.
  public var method: String {
    switch self {
    case .setDiscoveryFilter: "SetDiscoveryFilter"
    case .startDiscovery: "StartDiscovery"
    case .endDiscoveryForAFreshOne: "StopDiscovery"
    case .listDevices, .listCharacteristics: "GetManagedObjects"
    case .deviceProperties, .checkServicesResolved: "GetAll"
    case .connect: "Connect"
    case .startNotify: "StartNotify"
    case .acquireWrite: "AcquireWrite"
    case .writeControl, .writeData: "WriteValue"
    case .readInfo, .readBlockHashes, .readIdentity: "ReadValue"
    }
  }
}

/// A method call on bluetoothd (destination `org.bluez`), as the machine asks for it.
public struct BlueZRequest: Equatable, Sendable {
  public var path: DBusObjectPath
  public var interface: String
  public var method: String
  public var arguments: [DBusValue]
  public var timeout: Duration

  public init(
    path: DBusObjectPath, interface: String, method: String, arguments: [DBusValue] = [],
    timeout: Duration = .seconds(20)
  ) {
    self.path = path
    self.interface = interface
    self.method = method
    self.arguments = arguments
    self.timeout = timeout
  }
}

/// The machine's own token for a call it started; the shell maps it to the D-Bus serial.
public struct BlueZCallID: Hashable, Sendable, CustomStringConvertible {
  public let rawValue: Int
  public init(_ rawValue: Int) { self.rawValue = rawValue }
  public var description: String { "call \(rawValue)" }
}

/// The timers the machine runs; the shell fires `.timerFired` when one is due.
public enum BlueZTimer: Hashable, Sendable, CaseIterable {
  /// The whole connect, from `connect` to ready (20 s).
  case connectDeadline
  /// A discovery that found nothing for `BlueZ.discoveryRound`: a fresh one is started, because
  /// the kernel may have dropped the only report the controller gave of the device.
  case freshDiscovery
  /// Starting over after a set-up step met a link going down (500 ms).
  case retryConnect
  /// Calling Connect again after BlueZ said one was in progress (500 ms).
  case connectAgain
  /// How long the OTA characteristics may take to appear after the services resolved (1 s).
  case characteristicsLate
  /// Data waits for room in bluetoothd's socket: look again shortly (2 ms).
  case socketRoom
  /// The data path took nothing while data waited (`dataStallTimeout`): the device gives no
  /// credits, or bluetoothd no longer reads its socket.
  case dataStall
}
