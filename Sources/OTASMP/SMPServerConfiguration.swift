import OTACBOR

/// What the server tells clients about itself and holds their requests to.
public struct SMPServerConfiguration: Equatable, Sendable {
  /// The largest message (header and body) a client may send: MCUmgr parameters' `buf_size`.
  public var bufferSize: Int
  /// How many requests a client may have in flight: `buf_count`.
  public var bufferCount: Int
  /// MCUboot's mode as bootloader info reports it (see docs/SMP.md for why 3, "swap using move").
  public var bootloaderMode: Int64
  /// Bounds on a request body's CBOR.
  public var limits: CBORLimits

  public init(bufferSize: Int = 2048, bufferCount: Int = 1, bootloaderMode: Int64 = 3) {
    self.bufferSize = bufferSize
    self.bufferCount = bufferCount
    self.bootloaderMode = bootloaderMode
    limits = CBORLimits(maxDepth: 4, maxItems: 64, maxBytes: bufferSize)
  }
}
