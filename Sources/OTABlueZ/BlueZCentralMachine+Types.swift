import Logging
import OTADBus
import OTALink
import OTASystem

/// The machine's configuration, events, actions and phases.
extension BlueZCentralMachine {
  public struct Configuration: Sendable {
    public var adapter: String
    public var selector: DeviceSelector
    /// How many data writes may wait in the machine (the credit given to the sender).
    public var queueDepth: Int
    /// How many WriteValue data commands may be outstanding when AcquireWrite was refused.
    public var commandsInFlight: Int
    /// GATT, the device's L2CAP channel, or the channel when offered.
    public var dataPath: DataPath
    /// How many SDUs may wait in the machine when data goes over the L2CAP channel: the control
    /// point's WINDOW goes straight out over GATT, so whatever waits on the data path arrives that
    /// much after it (at 4 KiB an SDU a deep queue put whole windows behind their WINDOW).
    public var channelQueueDepth: Int
    /// How long data may wait on a socket or channel that takes nothing before the path counts as
    /// dead: a device that returns no credits would otherwise hold the push forever.
    public var dataStallTimeout: Duration

    public init(
      adapter: String = "hci0", selector: DeviceSelector, queueDepth: Int = 16, commandsInFlight: Int = 4,
      dataPath: DataPath = .gatt, channelQueueDepth: Int = 2, dataStallTimeout: Duration = .seconds(10)
    ) {
      self.dataStallTimeout = dataStallTimeout
      self.dataPath = dataPath
      self.channelQueueDepth = channelQueueDepth
      self.adapter = adapter
      self.selector = selector
      self.queueDepth = queueDepth
      self.commandsInFlight = commandsInFlight
    }
  }

  public enum Event: Equatable, Sendable {
    // The CentralLink API.
    case connect
    case disconnect
    case writeControl([UInt8])
    case writeData([UInt8])
    case readInfo
    case readBlockHashes
    case readIdentity
    /// The loop came around (`service`): flush data, report credit.
    case loopTurn
    // The bus.
    case replied(BlueZCallID, Result<[DBusValue], DBusError>)
    /// A call could not even be sent.
    case callNotSent(BlueZCallID, DBusError)
    case signal(DBusSignal)
    case busLost
    case timerFired(BlueZTimer)
    // The data socket, after `.adoptDataSocket` and `.sendData`.
    case dataSocketAdopted
    /// The data socket took the first `count` of the chunks of the last `.sendData`.
    case dataSent(count: Int)
    case dataSocketFailed(String)
    // The L2CAP data channel, after `.openChannel` and `.sendChannelData`.
    case channelOpened(L2CAPChannelParameters)
    /// The channel could not be opened.
    case channelFailed(String)
    /// The open channel failed while sending.
    case channelDropped(String)
  }

  public enum Action: Equatable, Sendable {
    /// Start this call and report its answer as `.replied(id, …)`.
    case call(BlueZCallID, BlueZCall, BlueZRequest)
    /// Send this call; its answer does not matter (StopDiscovery, RemoveDevice, Disconnect).
    case send(BlueZRequest)
    /// Forget a call: its answer, if one still comes, is dropped.
    case cancel(BlueZCallID)
    case startTimer(BlueZTimer, after: Duration)
    case stopTimer(BlueZTimer)
    /// Hand this to the sender.
    case emit(CentralEvent)
    /// Take a duplicate of AcquireWrite's socket, non-blocking; answer `.dataSocketAdopted` or `.dataSocketFailed`.
    case adoptDataSocket(DBusFileDescriptor)
    /// Write these chunks into the data socket, in order, until it is full; answer `.dataSent`.
    case sendData([[UInt8]])
    case closeDataSocket
    /// Open an L2CAP channel to the device (asking for `security` when set); answer
    /// `.channelOpened` or `.channelFailed`.
    case openChannel(L2CAPEndpoint, security: BluetoothSecurity?)
    /// Write these chunks into the channel, one SDU each, until it is full; answer `.dataSent` or
    /// `.channelDropped`.
    case sendChannelData([[UInt8]])
    case closeChannel
    case log(Logger.Level, String)
  }

  /// The OTA characteristics of the connected device.
  public struct Characteristics: Equatable, Sendable {
    public var control: DBusObjectPath
    public var data: DBusObjectPath
    public var info: DBusObjectPath
    /// The running slot's block hashes: absent on a device from before data operations.
    public var blockHashes: DBusObjectPath? = nil
    /// The Device Information Service's identity strings the device serves (`Characteristic.identity`),
    /// by characteristic: none on an otad from before them.
    public var identity: [Characteristic: DBusObjectPath] = [:]
    /// The data characteristic's `MTU` property (BlueZ 5.62 and later), for when AcquireWrite is refused.
    public var mtu: Int?
  }

  /// How data reaches the device.
  public enum Transport: Equatable, Sendable {
    /// AcquireWrite's socket: each write is one ATT write command.
    case socket
    /// WriteValue with type command, this many outstanding.
    case writeCommands(inFlight: Int)
    /// The device's L2CAP channel: each write is one SDU.
    case channel
  }

  public struct Ready: Equatable, Sendable {
    public var characteristics: Characteristics
    public var mtu: Int
    public var transport: Transport
    var dataQueue: [[UInt8]] = []
    var controlQueue: [[UInt8]] = []
    var controlInFlight = false
    /// Info read so far, while a long read is under way.
    var infoRead: [UInt8]?
    /// The block hashes read so far, while their long read is under way.
    var blockHashesRead: [UInt8]?
    /// The identity read so far, while `readIdentity`'s reads are under way, and what they still wait for.
    var identityRead: DeviceIdentity?
    var identityLeft: Set<Characteristic> = []
    /// The data path was chosen on this connection (at its first Info read).
    var dataPathChosen = false
    /// Info held back while the channel opens; handed on after.
    var heldInfo: [UInt8]?
    /// What data went through before the channel opened (to go back to it).
    var gattTransport: Transport?
  }

  public enum Phase: Equatable, Sendable {
    case idle
    case discovering
    case connecting
    /// Connected; waiting for ServicesResolved.
    case resolving
    /// Services resolved; collecting the OTA characteristics (uuid to path, MTU of data).
    case listing([String: DBusObjectPath], dataMTU: Int?)
    /// StartNotify, then AcquireWrite; then adopting its socket (with the MTU it gave).
    case preparing(Characteristics, acquiredMTU: Int?)
    case ready(Ready)
  }
}
