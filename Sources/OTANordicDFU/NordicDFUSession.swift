import OTAReceiverHost
import OTAStorage

/// What a Nordic DFU session hands the daemon after each write: the control point's notifications,
/// whether the device restarts (into its trial), and a line for the log.
public struct NordicDFUOutput: Equatable, Sendable {
  public var notifications: [[UInt8]] = []
  /// The firmware was activated (or a reset asked for): the device restarts, into the trial when one was set.
  public var restart = false
  /// What happened, for the log.
  public var note: String?

  public init() {}
}

/// A Nordic DFU protocol on the receiver host (Legacy or Secure DFU, docs/NORDIC-DFU.md): the
/// daemon feeds it the control point's and the packet characteristic's writes and the central's
/// going, and carries out what it answers.
public protocol NordicDFUSession: Sendable {
  /// Whether an update is under way.
  var active: Bool { get }
  /// While the firmware arrives: the bytes received and the image's size (for faults on demand).
  var firmwareProgress: (received: UInt32, size: UInt32)? { get }
  mutating func control(_ bytes: [UInt8], host: inout ReceiverHost) throws(StorageError) -> NordicDFUOutput
  mutating func packet(_ bytes: [UInt8], host: inout ReceiverHost) throws(StorageError) -> NordicDFUOutput
  mutating func disconnected() -> NordicDFUOutput
}
