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

  init(service: SMPService, udp: SMPEndpoint?) {
    self.service = service
    self.udp = udp
    bluetooth = SMPBluetoothSessions(maxMessage: service.bufferSize)
  }

  /// Answers one whole message from `client` at `now`.
  mutating func answer(_ message: [UInt8], from client: String, host: inout ReceiverHost, now: Duration)
    throws(StorageError) -> SMPDevice.Output
  {
    try service.answer(message, from: client, host: &host, now: now)
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
