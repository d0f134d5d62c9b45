import OTAWire

/// What the air model can carry, in ATT value bytes per second, with writes back to back and the
/// peripheral answering with empty PDUs: the figures goodput is compared with.
extension AirTime {
  /// Connection events run to reach a steady state (the split of writes across events repeats).
  static let eventsMeasured = 1000

  /// ATT value bytes per second carried by writes of `valueLength` bytes back to back, in events of
  /// at most `packetLimit` packets (nil: air time only) and of this link's length.
  public func valueBytesPerSecond(valueLength: Int, packetLimit: Int?, airLimited: Bool = true) -> Double {
    guard packetLimit != nil || airLimited else { return .infinity }
    let frame = valueLength + ATTMTU.headerSize + 4
    var left = frame
    var delivered = 0
    for _ in 0..<Self.eventsMeasured {
      var event = ConnectionEvent(air: self, packetLimit: packetLimit, airLimited: airLimited)
      while event.fit(central: min(left, dataLength), peripheral: 0) {
        left -= min(left, dataLength)
        if left == 0 {
          delivered += valueLength
          left = frame
        }
      }
    }
    return Double(delivered) / (Double(Self.eventsMeasured) * intervalMicroseconds / 1e6)
  }

  /// The write sizes worth trying at a write limit: whole packets, and the largest write.
  static func candidateWrites(limit: Int, dataLength: Int) -> [Int] {
    [WriteSize.wholePackets(limit: limit, dataLength: dataLength), limit]
  }

  /// The model's capacity for these conditions: the link's MTU and packet limit, the best write
  /// size within MTU − 3 (the one `WriteSize.auto` picks, unless the largest write does better).
  public var rawPayloadBytesPerSecond: Double {
    let limit = min(ATTMTU(clamping: conditions.mtu).maxWriteValue, DataChunk.largestWrite)
    return Self.candidateWrites(limit: limit, dataLength: dataLength).map {
      valueBytesPerSecond(
        valueLength: $0, packetLimit: conditions.packetsPerEvent, airLimited: conditions.airTimePacing)
    }.max() ?? 0
  }

  /// The physical ceiling for this interval and event length, PHY, data length and encryption: no
  /// controller packet limit, any MTU, the best write size. No ATT writes carry more over this air.
  public var physicalCeilingBytesPerSecond: Double {
    Self.candidateWrites(limit: DataChunk.largestWrite, dataLength: dataLength).map {
      valueBytesPerSecond(valueLength: $0, packetLimit: nil)
    }.max() ?? 0
  }

  /// ATT value bytes per second with no gaps between events at all (one endless event): the
  /// radio's own limit at this PHY and data length.
  public func continuousBytesPerSecond(valueLength: Int) -> Double {
    Double(valueLength) / (cost(valueLength: valueLength).microseconds / 1e6)
  }
}
