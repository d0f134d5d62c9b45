import OTAReceiverHost
import OTASMP
import OTAStorage

/// The one SMP path on the device, whatever carried the message (a UDP datagram, or writes to the
/// SMP characteristic reassembled by `SMPBluetoothSessions`): the server and the device commands
/// (`SMPDevice`), carried out on the host's update transaction (whose lease keeps other protocols
/// out while an upload goes on).
public struct SMPService: Sendable {
  public var device: SMPDevice

  public init(device: SMPDevice = SMPDevice()) {
    self.device = device
  }

  /// The largest message taken (header and body): MCUmgr parameters' `buf_size`.
  public var bufferSize: Int { device.server.configuration.bufferSize }

  /// Answers one whole message from `client` (a UDP address, a central: whose work budget it
  /// spends) at `now` (the loop's time: the sessions' leases and the budgets run on it).
  public mutating func answer(
    _ message: [UInt8], from client: String = "SMP client", host: inout ReceiverHost, now: Duration
  ) throws(StorageError) -> SMPDevice.Output {
    host.advance(to: now)
    return try device.handle(message, host: &host, client: client)
  }

  /// The answer "message too large" (rc 7) to a message whose transport cut it, or whose header
  /// announced more than `bufferSize`: nil without a whole request header.
  public func refuseTooLarge(_ message: [UInt8]) -> [UInt8]? {
    if case .respond(let answer) = device.server.refuseTooLarge(message) { answer } else { nil }
  }
}
