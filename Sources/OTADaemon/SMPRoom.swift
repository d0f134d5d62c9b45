import OTALink
import OTAReceiverHost
import OTASMPServer
import OTAStorage
import OTASystem
import OTAWire

/// SMP (MCUmgr) as the daemon serves it (docs/SMP.md): the server (an adapter over the host's update
/// transaction, `SMPService`), the reassembly of SMP over Bluetooth per central, and the UDP socket
/// with what its peers could not be sent. What it decides is values; the daemon's loop sends, logs
/// and restarts.
struct SMPRoom {
  var service: SMPService
  var bluetooth: SMPBluetoothSessions
  let udp: SMPEndpoint?
  /// UDP datagrams that could not be received or answered (a peer's loss, never the daemon's).
  var udpPeerErrors = 0
  /// The client whose request last took or renewed SMP's hold on the device (an upload, a state
  /// write: not a read, which holds nothing): SMP's session is that client's.
  private(set) var holder: String?

  init(service: SMPService, udp: SMPEndpoint?) {
    self.service = service
    self.udp = udp
    bluetooth = SMPBluetoothSessions(maxMessage: service.bufferSize)
  }

  /// Answers one whole message from `client` at `now`.
  mutating func answer(_ message: [UInt8], from client: String, host: inout ReceiverHost, now: Duration)
    throws(StorageError) -> SMPDevice.Output
  {
    let before = host.transaction.lease
    let output = try service.answer(message, from: client, host: &host, now: now)
    if let lease = host.transaction.lease, lease.owner == .smp, lease != before { holder = client }
    return output
  }

  /// A central went over Bluetooth: its reassembly forgotten, and when SMP's hold was its, that
  /// session ends (docs/PROTOCOL.md [P-SESS-5]: a session holds the device while it acts and its
  /// central has not disconnected) rather than 30 s later. Another central's read and departure
  /// leave an upload's hold alone.
  mutating func centralGone(_ central: String, host: inout ReceiverHost) {
    bluetooth.forget(central)
    guard holder == central else { return }
    holder = nil
    host.release(.smp)
  }

  /// A write to the SMP characteristic by `central`: what it completed (or gave up).
  mutating func receive(_ bytes: [UInt8], from central: String, mtu: ATTMTU, now: Duration)
    -> [SMPBluetoothSessions.Outcome]
  {
    bluetooth.receive(bytes, from: central, mtu: mtu, now: now)
  }

  /// A UDP peer's datagram could not be received or answered: true for the first (logged at warning).
  mutating func notePeerError() -> Bool {
    udpPeerErrors += 1
    return udpPeerErrors == 1
  }
}
