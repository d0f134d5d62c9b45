/// The protocol whose session began a transfer into the inactive slot: the transfer's owner. Only
/// the owner writes, commits, validates and activates it (`UpdateTransaction` in OTAReceiverHost
/// refuses everyone else), and only the owner resumes it after a restart.
///
/// Written to disk (the transfer journal's byte 7): never renumber.
public enum TransferOwner: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  /// This project's own OTA protocol (docs/PROTOCOL.md), over GATT or the L2CAP channel.
  case ota = 1
  /// SMP (MCUmgr) image upload, over Bluetooth or UDP (docs/SMP.md).
  case smp = 2
  /// Nordic's Legacy DFU (docs/NORDIC-DFU.md).
  case legacyDFU = 3
  /// Nordic's Secure DFU (docs/NORDIC-DFU.md).
  case secureDFU = 4

  public var description: String {
    switch self {
    case .ota: "the OTA protocol"
    case .smp: "SMP"
    case .legacyDFU: "Legacy DFU"
    case .secureDFU: "Secure DFU"
    }
  }
}
