/// The device's report of what is missing (feature bit 0, `Features.missingRanges`), a
/// control-point notification of its own: `0x61`, the end of the highest chunk stored u32, then
/// ranges as `offset u32, length u16`, lowest first. Sent only to a central that turned the
/// feature on. At ATT MTU 23 (20-byte notifications) it holds 2 ranges; never more than 16.
public struct MissingReport: Equatable, Sendable {
  /// The first byte, distinct from every response's `0x60`.
  public static let marker: UInt8 = 0x61
  public static let headerSize = 5
  public static let rangeSize = 6
  /// The most ranges one report carries, whatever the MTU.
  public static let maxRanges = 16

  /// One past the highest byte the device has stored: every byte below it that is not in
  /// `ranges` arrived (up to the ranges a report can hold).
  public var highestStored: UInt32
  /// Missing byte ranges, sorted, disjoint, each at most 65535 bytes long.
  public var ranges: [Range<UInt32>]

  public init(highestStored: UInt32, ranges: [Range<UInt32>]) {
    self.highestStored = highestStored
    self.ranges = ranges
  }

  /// How many ranges fit in one notification at `mtu` (MTU − 3 bytes).
  public static func capacity(mtu: ATTMTU) -> Int {
    max(1, min(maxRanges, (mtu.maxNotifyValue - headerSize) / rangeSize))
  }

  /// Splits `missing` into ranges a report can carry (none longer than 65535), at most `limit`.
  public static func reportable(_ missing: [Range<UInt32>], limit: Int) -> [Range<UInt32>] {
    var out: [Range<UInt32>] = []
    for range in missing {
      var lower = range.lowerBound
      while lower < range.upperBound, out.count < limit {
        let upper = UInt32(min(UInt64(lower) + UInt64(UInt16.max), UInt64(range.upperBound)))
        out.append(lower..<upper)
        lower = upper
      }
    }
    return out
  }

  public init(bytes: some Collection<UInt8>) throws(WireError) {
    var reader = ByteReader(bytes)
    let marker = try reader.readU8()
    guard marker == Self.marker else {
      throw .invalidField("missing-report marker 0x\(String(marker, radix: 16))")
    }
    highestStored = try reader.readU32()
    guard reader.remaining % Self.rangeSize == 0 else {
      throw .trailingBytes(count: reader.remaining % Self.rangeSize)
    }
    ranges = []
    while reader.remaining > 0 {
      let offset = try reader.readU32()
      let length = try reader.readU16()
      guard length > 0, UInt64(offset) + UInt64(length) <= UInt64(UInt32.max) else {
        throw .invalidField("missing range at \(offset) of length \(length)")
      }
      ranges.append(offset..<offset + UInt32(length))
    }
  }

  public func append(to bytes: inout [UInt8]) {
    bytes.appendU8(Self.marker)
    bytes.appendU32(highestStored)
    for range in ranges {
      bytes.appendU32(range.lowerBound)
      bytes.appendU16(UInt16(clamping: range.count))
    }
  }

  public var encoded: [UInt8] {
    var bytes: [UInt8] = []
    append(to: &bytes)
    return bytes
  }
}
