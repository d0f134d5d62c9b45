import OTAWire

/// A delta planned once and kept (`otactl delta`): the segments of a target against a base, with
/// what identifies both, so that every push of that release to a device running that base starts
/// sending at once instead of planning again (a 96 MiB pair takes 24 s to plan).
///
/// Layout (little-endian): magic "BLUEOTA-DELTA\n" (14 bytes), version u8 (2; 1 is read too), base
/// size u32, base SHA-256 (32 bytes), target size u32, target SHA-256 (32 bytes), segment count u32,
/// then per segment `kind u8 (0 literal, 1 copy, 2 patch), length u32, base offset u32` (copies and
/// patches only), the segments back to back from offset 0; then (version 2) frame count u32 and per
/// frame `target length u32, size u32, size bytes of one zstd frame against the base`, the frames
/// back to back from offset 0 too (count 0: none).
///
/// A file only proposes: a push checks that it covers the target exactly and reads inside the base,
/// and the device's WINDOW CRC32 checks every byte it rebuilds.
public struct DeltaPlanFile: Equatable, Sendable {
  public static let magic = Array("BLUEOTA-DELTA\n".utf8)
  public static let version: UInt8 = 2

  public var baseSize: UInt32
  public var baseSHA256: [UInt8]
  public var targetSize: UInt32
  public var targetSHA256: [UInt8]
  public var segments: [DeltaSegment]
  /// The target as zstd frames against the base (`DeltaFrame`); empty when the plan has none.
  public var frames: [DeltaFrame]

  public init(
    baseSize: UInt32, baseSHA256: [UInt8], targetSize: UInt32, targetSHA256: [UInt8],
    segments: [DeltaSegment],
    frames: [DeltaFrame] = []
  ) {
    self.frames = frames
    self.baseSize = baseSize
    self.baseSHA256 = baseSHA256
    self.targetSize = targetSize
    self.targetSHA256 = targetSHA256
    self.segments = segments
  }

  public enum DecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    case notADeltaPlan
    case unsupportedVersion(UInt8)
    case truncated
    case badSegment(index: Int, reason: String)
    case badFrame(index: Int, reason: String)
    case trailingBytes(Int)

    public var description: String {
      switch self {
      case .notADeltaPlan: "not a delta plan (no BLUEOTA-DELTA header): make one with otactl delta"
      case .unsupportedVersion(let version):
        "a delta plan of format \(version); this otactl reads formats 1 to \(DeltaPlanFile.version)"
      case .truncated: "the delta plan ends early: the file is cut short"
      case .badSegment(let index, let reason): "segment \(index) of the delta plan: \(reason)"
      case .badFrame(let index, let reason): "frame \(index) of the delta plan: \(reason)"
      case .trailingBytes(let count): "\(count) bytes after the delta plan's last segment"
      }
    }
  }

  public var encoded: [UInt8] {
    var bytes = Self.magic
    bytes.appendU8(Self.version)
    bytes.appendU32(baseSize)
    bytes += baseSHA256
    bytes.appendU32(targetSize)
    bytes += targetSHA256
    bytes.appendU32(UInt32(segments.count))
    for segment in segments {
      switch segment.source {
      case .literal:
        bytes.appendU8(0)
        bytes.appendU32(segment.end - segment.start)
      case .copy(let base):
        bytes.appendU8(1)
        bytes.appendU32(segment.end - segment.start)
        bytes.appendU32(base)
      case .patch(let base):
        bytes.appendU8(2)
        bytes.appendU32(segment.end - segment.start)
        bytes.appendU32(base)
      }
    }
    bytes.appendU32(UInt32(frames.count))
    for frame in frames {
      bytes.appendU32(frame.length)
      bytes.appendU32(UInt32(frame.bytes.count))
      bytes += frame.bytes
    }
    return bytes
  }

  public init(bytes: [UInt8]) throws(DecodeError) {
    guard bytes.starts(with: Self.magic) else { throw .notADeltaPlan }
    var reader = ByteReader(bytes[Self.magic.count...])
    do {
      let version = try reader.readU8()
      guard version == 1 || version == Self.version else { throw DecodeError.unsupportedVersion(version) }
      baseSize = try reader.readU32()
      baseSHA256 = Array(try reader.readBytes(32))
      targetSize = try reader.readU32()
      targetSHA256 = Array(try reader.readBytes(32))
      let count = Int(try reader.readU32())
      // Each segment takes at least 5 bytes: a count past what the file holds is a lie, not an allocation.
      guard count <= reader.remaining / 5 else { throw DecodeError.truncated }
      var segments: [DeltaSegment] = []
      segments.reserveCapacity(count)
      var start: UInt64 = 0
      for index in 0..<count {
        let kind = try reader.readU8()
        let length = UInt64(try reader.readU32())
        guard length > 0 else { throw DecodeError.badSegment(index: index, reason: "a length of 0") }
        guard start + length <= UInt64(targetSize) else {
          throw DecodeError.badSegment(index: index, reason: "past the target's \(targetSize) bytes")
        }
        let source: DeltaSegment.Source
        switch kind {
        case 0: source = .literal
        case 1: source = .copy(base: try reader.readU32())
        case 2: source = .patch(base: try reader.readU32())
        default: throw DecodeError.badSegment(index: index, reason: "kind \(kind)")
        }
        segments.append(DeltaSegment(start: UInt32(start), end: UInt32(start + length), source: source))
        start += length
      }
      guard start == UInt64(targetSize) else {
        throw DecodeError.badSegment(
          index: count, reason: "the segments cover \(start) of \(targetSize) bytes")
      }
      self.segments = segments
      frames = version >= 2 ? try Self.frames(&reader, targetSize: targetSize) : []
      guard reader.remaining == 0 else { throw DecodeError.trailingBytes(reader.remaining) }
    } catch let error as DecodeError {
      throw error
    } catch {
      throw .truncated
    }
  }

  private static func frames(_ reader: inout ByteReader, targetSize: UInt32) throws -> [DeltaFrame] {
    let count = Int(try reader.readU32())
    // Each frame takes at least 9 bytes.
    guard count <= reader.remaining / 9 else { throw DecodeError.truncated }
    var frames: [DeltaFrame] = []
    var start: UInt64 = 0
    for index in 0..<count {
      let length = UInt64(try reader.readU32())
      let size = Int(try reader.readU32())
      guard length > 0, size > 0 else {
        throw DecodeError.badFrame(index: index, reason: "a length or size of 0")
      }
      guard start + length <= UInt64(targetSize) else {
        throw DecodeError.badFrame(index: index, reason: "past the target's \(targetSize) bytes")
      }
      guard size <= reader.remaining else { throw DecodeError.truncated }
      frames.append(
        DeltaFrame(start: UInt32(start), length: UInt32(length), bytes: Array(try reader.readBytes(size))))
      start += length
    }
    guard count == 0 || start == UInt64(targetSize) else {
      throw DecodeError.badFrame(index: count, reason: "the frames cover \(start) of \(targetSize) bytes")
    }
    return frames
  }
}
