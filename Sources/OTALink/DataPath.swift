import OTASystem

/// How a central sends image data: GATT write commands, the device's LE L2CAP channel, or the
/// channel when the device offers one and GATT otherwise.
public enum DataPath: String, Sendable, CaseIterable {
  case gatt
  case l2cap
  case auto

  /// What to use on a connection: the channel when asked for (or `auto`) and the device offers a
  /// PSM, unless the channel failed on this device before (`channelFailure`: why), in which case
  /// `auto` stays on GATT. `.l2cap` never falls back: it fails with the reason.
  public func choose(psm: UInt16, channelFailure: String?) -> DataPathChoice {
    switch self {
    case .gatt:
      return .gatt(reason: nil)
    case .l2cap:
      if psm == 0 { return .fail("the device offers no L2CAP channel (Info PSM 0)") }
      if let channelFailure { return .fail("the L2CAP channel failed: \(channelFailure)") }
      return .channel(psm: psm)
    case .auto:
      if psm == 0 { return .gatt(reason: "the device offers no L2CAP channel") }
      if let channelFailure { return .gatt(reason: "the L2CAP channel failed (\(channelFailure))") }
      return .channel(psm: psm)
    }
  }
}

public enum DataPathChoice: Equatable, Sendable {
  /// Open the channel on this PSM.
  case channel(psm: UInt16)
  /// Write over GATT; `reason` says why not the channel (nil when GATT was asked for).
  case gatt(reason: String?)
  /// Give up: the channel was demanded and cannot be had.
  case fail(String)
}

/// The data channel a central opened: its PSM and what the kernel reports about it.
public struct DataChannelReport: Equatable, Sendable {
  public var psm: UInt16
  public var parameters: L2CAPChannelParameters

  public init(psm: UInt16, parameters: L2CAPChannelParameters) {
    self.psm = psm
    self.parameters = parameters
  }

  /// Image bytes per chunk on the channel: its send MTU less the 4-byte offset (nil when the
  /// kernel does not say: then the device's receive MTU of docs/PROTOCOL.md is assumed).
  public var maxChunkPayload: Int? { parameters.sendMTU.map { max(1, $0 - 4) } }
}
