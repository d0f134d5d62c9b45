import OTAWire

/// The seam between the protocol and a BLE link, in both roles. The simulated link implements it
/// over a Unix socket; BlueZ implements it over D-Bus. Both are polled: the owner waits for
/// `descriptors` to be readable (or `nextDeadline`), then calls `service`.

/// What the device side hears from its link.
public enum PeripheralEvent: Equatable, Sendable {
  /// A central connected, at the ATT MTU the link negotiated (clamped where the link read it).
  case connected(mtu: ATTMTU)
  case disconnected
  /// A write to the control point (acknowledged at the ATT level already).
  case controlWrite([UInt8])
  /// A write to the data characteristic.
  case dataWrite([UInt8])
  /// The link dropped a peer that broke its rules (no hello in time, not reading its answers,
  /// bytes that are not frames): who it was and why, for the log. A `.disconnected` follows if it
  /// had connected.
  case droppedPeer(String)
  /// A write to the SMP characteristic (SMP over Bluetooth, docs/SMP.md): a piece of an SMP message,
  /// from `central` (the link's name for it), whose ATT MTU is `mtu`. SMP centrals are not the OTA
  /// central: they connect, write and go without `.connected` or `.disconnected`.
  case smpWrite(central: String, mtu: ATTMTU, bytes: [UInt8])
  /// An SMP central went away: what it sent of a message is forgotten.
  case smpCentralGone(central: String)
  /// Nordic's DFU (docs/NORDIC-DFU.md): a write to one service's control point or packet
  /// characteristic by `central` (the link's name for it), and a central that wrote to it going
  /// away. Which central's session a write belongs to is the daemon's to decide.
  case nordicDFUControl(NordicDFUService, central: String, [UInt8])
  case nordicDFUPacket(NordicDFUService, central: String, [UInt8])
  case nordicDFUCentralGone(NordicDFUService, central: String)
}

/// Nordic's two DFU services (docs/NORDIC-DFU.md): SDK 11's Legacy DFU and SDK 12's Secure DFU.
public enum NordicDFUService: String, Hashable, Sendable {
  case legacy = "Legacy DFU"
  case secure = "Secure DFU"
}

/// A characteristic's value for a read by a central whose ATT MTU is `mtu`. Info's max chunk payload
/// depends on that MTU, and a read may be the first thing a central does on a connection (BlueZ
/// passes the MTU with it), before any event has told the device the MTU.
public typealias CharacteristicValue = (_ characteristic: Characteristic, _ mtu: ATTMTU) -> [UInt8]

public protocol PeripheralLink: AnyObject {
  /// What to poll for reading.
  var descriptors: [Int32] { get }
  /// What to poll for writing too: sockets with answers waiting for a slow reader.
  var writeDescriptors: [Int32] { get }
  var nextDeadline: Duration? { get }
  /// Handles what is readable (or writable); `value` gives a characteristic's current value for
  /// reads, at the reading central's MTU.
  func service(readable: Set<Int32>, now: Duration, value: CharacteristicValue) throws(LinkError)
    -> [PeripheralEvent]
  /// Sends a control-point notification; dropped when no central is connected.
  func notify(_ bytes: [UInt8])
  /// Drops the current central, if any.
  func disconnect()
  /// Drops the central the link names `central` (an SMP or a Nordic DFU central, as its events
  /// name it); when it is the OTA central, a `.disconnected` follows; when it wrote to a Nordic DFU
  /// service, a `.nordicDFUCentralGone`.
  func disconnect(central: String)
  /// Sends one notification on the SMP characteristic (at most the central's MTU − 3 bytes); dropped
  /// when no central asked for them. Links without SMP drop it.
  func notifySMP(_ bytes: [UInt8])
  /// The PSM of the LE L2CAP channel that takes data (Info offset 78), 0 when there is none.
  var dataChannelPSM: UInt16 { get }
  /// Sends one notification on a Nordic DFU service's control point; links without it drop it.
  func notifyNordicDFU(_ service: NordicDFUService, _ bytes: [UInt8])
}

extension PeripheralLink {
  public var writeDescriptors: [Int32] { [] }
  /// The simulated links carry no SMP service.
  public func notifySMP(_ bytes: [UInt8]) {}
  /// The simulated links have no SMP centrals.
  public func disconnect(central: String) {}
  /// The simulated links carry no Nordic DFU service.
  public func notifyNordicDFU(_ service: NordicDFUService, _ bytes: [UInt8]) {}
  public var dataChannelPSM: UInt16 { 0 }
}

/// What the central side hears from its link.
public enum CentralEvent: Equatable, Sendable {
  /// Connected and ready, at the ATT MTU the link negotiated (clamped where the link read it).
  case connected(mtu: ATTMTU)
  case connectFailed(String)
  /// The device refused the connection: it serves another central (the simulated link's busy
  /// answer; BlueZ tells a central nothing of the kind).
  case deviceBusy
  case disconnected(String)
  /// A control-point notification.
  case notification([UInt8])
  /// The whole Info value, after a long read.
  case info([UInt8])
  /// The whole block-hashes value, after a long read; empty when the device has no such
  /// characteristic or refused the read.
  case blockHashes([UInt8])
  /// The link can take this many more data writes now.
  case writable(Int)
  /// A control-point write refused at the ATT level (an ATT error code).
  case controlWriteFailed(UInt8)
  /// Data now goes over this L2CAP channel (before the Info read that follows its opening).
  case dataChannelOpened(DataChannelReport)
  /// What the device says it is, after `readIdentity`: once, when all three reads have ended.
  case identity(DeviceIdentity)
}

/// Who a device is and what hardware it is, from its Device Information Service (docs/PROTOCOL.md):
/// Serial Number String (0x2A25), Model Number String (0x2A24), Hardware Revision String (0x2A27).
/// Each is nil when the device does not serve that characteristic (an otad from before them) or
/// its read failed.
public struct DeviceIdentity: Equatable, Sendable {
  public var serial: String?
  public var model: String?
  public var hardwareRevision: String?

  public init(serial: String? = nil, model: String? = nil, hardwareRevision: String? = nil) {
    self.serial = serial
    self.model = model
    self.hardwareRevision = hardwareRevision
  }

  /// The value of one of the three characteristics (`Characteristic.identity`); nil for the others.
  public subscript(_ characteristic: Characteristic) -> String? {
    get {
      switch characteristic {
      case .serialNumber: serial
      case .modelNumber: model
      case .hardwareRevision: hardwareRevision
      default: nil
      }
    }
    set {
      switch characteristic {
      case .serialNumber: serial = newValue
      case .modelNumber: model = newValue
      case .hardwareRevision: hardwareRevision = newValue
      default: break
      }
    }
  }
}

public protocol CentralLink: AnyObject {
  var descriptors: [Int32] { get }
  var nextDeadline: Duration? { get }
  /// Starts connecting; `.connected` or `.connectFailed` follows from `service`.
  func connect(now: Duration)
  func service(readable: Set<Int32>, now: Duration) -> [CentralEvent]
  /// Queues an acknowledged write to the control point; they go out one at a time, in order.
  func writeControl(_ bytes: [UInt8])
  /// Queues a write-without-response to the data characteristic (within the credit given).
  func writeData(_ bytes: [UInt8])
  /// Starts a long read of Info; `.info` follows.
  func readInfo()
  /// Starts a long read of the running slot's block hashes; `.blockHashes` follows, empty when the
  /// device has no such characteristic or the read fails (never nothing: the sender waits for it).
  func readBlockHashes()
  /// Starts reading the Device Information Service's serial number, model number and hardware
  /// revision; one `.identity` follows when all three reads have ended, a field nil where the
  /// device has no such characteristic or refused the read (never nothing: the caller waits for it).
  func readIdentity()
  func disconnect()
}
