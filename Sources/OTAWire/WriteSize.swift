/// How many value bytes the central puts in one ATT write command.
///
/// An ATT write command of n value bytes travels as an L2CAP frame of n + 7 bytes (3 ATT header,
/// 4 L2CAP header), cut into link-layer packets of at most the link's data length (251 bytes with
/// Data Length Extension, 27 without). Every link-layer packet costs the same framing, inter-frame
/// spaces and acknowledgement whatever it carries, so a write whose frame ends in a short packet
/// pays a whole packet's overhead for a few bytes: at MTU 517 a 510-byte write is 251 + 251 + 15.
/// `auto` picks the largest value that fills whole packets (n × dataLength − 7) within the MTU,
/// `fixed` a size chosen by hand (still capped by the MTU).
public enum WriteSize: Equatable, Sendable, CustomStringConvertible {
  case auto
  case fixed(Int)

  /// The L2CAP and ATT headers in front of a write's value: what a link-layer packet carries
  /// besides it.
  public static let frameOverhead = 4 + ATTMTU.headerSize
  /// The data length BlueZ does not tell a central: it is 251 on every controller with Data Length
  /// Extension (Bluetooth 4.2 and later), which is what a central that offers MTU > 23 has.
  public static let assumedDataLength = 251
  /// The link-layer payload without Data Length Extension.
  public static let minimumDataLength = 27

  /// The value bytes per write at `mtu` on a link whose link-layer packets carry `dataLength`
  /// bytes: never more than MTU − 3 nor `DataChunk.largestWrite`, never less than 1.
  public func valueLength(mtu: ATTMTU, dataLength: Int) -> Int {
    let limit = min(mtu.maxWriteValue, DataChunk.largestWrite)
    switch self {
    case .fixed(let size): return max(1, min(size, limit))
    case .auto: return Self.wholePackets(limit: limit, dataLength: dataLength)
    }
  }

  /// The largest n × dataLength − 7 that is at most `limit`; `limit` itself when not even one
  /// packet's worth fits (the write is one short packet anyway).
  public static func wholePackets(limit: Int, dataLength: Int) -> Int {
    let length = max(minimumDataLength, dataLength)
    let packets = (limit + frameOverhead) / length
    guard packets >= 1 else { return limit }
    return packets * length - frameOverhead
  }

  /// `auto` or a number of value bytes (chunk header included).
  public init?(_ text: String) {
    if text.lowercased() == "auto" {
      self = .auto
    } else if let size = Int(text), size > DataChunk.headerSize {
      self = .fixed(size)
    } else {
      return nil
    }
  }

  public var description: String {
    switch self {
    case .auto: "auto"
    case .fixed(let size): "\(size)"
    }
  }
}
