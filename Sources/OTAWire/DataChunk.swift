/// One write to the Data characteristic: `offset u32` then 1 or more image bytes.
public struct DataChunk: Equatable, Sendable {
  /// The largest ATT write BlueZ 5.66 delivers: longer write commands are silently dropped.
  public static let largestWrite = 510
  public static let headerSize = 4

  public var offset: UInt32
  public var payload: ArraySlice<UInt8>

  public init(offset: UInt32, payload: ArraySlice<UInt8>) {
    self.offset = offset
    self.payload = payload
  }

  /// Decodes without copying: the payload is a slice of `bytes`.
  public init(bytes: [UInt8]) throws(WireError) {
    guard bytes.count > DataChunk.headerSize else {
      throw .truncated(needed: DataChunk.headerSize + 1, available: bytes.count)
    }
    // Little-endian u32, read directly: this runs once per chunk, the hottest path of a transfer.
    offset = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    payload = bytes[DataChunk.headerSize...]
  }

  public var end: UInt64 { UInt64(offset) + UInt64(payload.count) }

  public func append(to bytes: inout [UInt8]) {
    bytes.reserveCapacity(bytes.count + DataChunk.headerSize + payload.count)
    bytes.appendU32(offset)
    bytes.append(contentsOf: payload)
  }

  public var encoded: [UInt8] {
    var bytes: [UInt8] = []
    append(to: &bytes)
    return bytes
  }

  /// The most image bytes one chunk may carry at a given ATT MTU: min(MTU − 3, 510) − 4.
  public static func maxPayload(mtu: ATTMTU) -> Int {
    max(1, min(mtu.maxWriteValue, largestWrite) - headerSize)
  }
}
