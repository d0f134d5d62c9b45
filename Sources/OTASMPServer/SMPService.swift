import OTAReceiverHost
import OTASMP
import OTAStorage

/// The one SMP path on the device, whatever carried the message (a UDP datagram, or writes to the
/// SMP characteristic reassembled by `SMPBluetoothSessions`): the server and the device commands
/// (`SMPDevice`), and when the last upload chunk arrived (an OTA PREPARE is refused "busy" for a
/// while after).
public struct SMPService: Sendable {
  public var device: SMPDevice
  public private(set) var lastUpload: Duration?

  public init(device: SMPDevice = SMPDevice()) {
    self.device = device
  }

  /// The largest message taken (header and body): MCUmgr parameters' `buf_size`.
  public var bufferSize: Int { device.server.configuration.bufferSize }

  /// Answers one whole message. `otaBusy`: an OTA transfer is under way (SMP then changes nothing).
  public mutating func answer(_ message: [UInt8], host: inout ReceiverHost, otaBusy: Bool, now: Duration)
    throws(StorageError) -> SMPDevice.Output
  {
    if Self.isUploadChunk(message) { lastUpload = now }
    return try device.handle(message, host: &host, otaBusy: otaBusy)
  }

  /// The answer "message too large" (rc 7) to a message whose transport cut it, or whose header
  /// announced more than `bufferSize`: nil without a whole request header.
  public func refuseTooLarge(_ message: [UInt8]) -> [UInt8]? {
    if case .respond(let answer) = device.server.refuseTooLarge(message) { answer } else { nil }
  }

  /// True while an SMP upload is under way: begun, not finished, a chunk within `quiet`.
  public func uploading(now: Duration, quiet: Duration = .seconds(30)) -> Bool {
    guard device.received != nil, let lastUpload else { return false }
    return now - lastUpload < quiet
  }

  /// Image group (1), upload (1), a write (op 2).
  static func isUploadChunk(_ message: [UInt8]) -> Bool {
    message.count >= SMPHeader.byteCount && message[0] & 0x07 == 2 && message[4] == 0 && message[5] == 1
      && message[7] == 1
  }
}
