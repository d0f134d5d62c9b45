import OTAChecksum
import OTADeltaPlan

/// An earlier release the central holds, and what identifies it against Info's running image.
public struct BaseImage: Equatable, Sendable {
  public struct Identity: Equatable, Hashable, Sendable {
    public var size: UInt32
    public var crc32: UInt32
    public init(size: UInt32, crc32: UInt32) {
      self.size = size
      self.crc32 = crc32
    }
  }

  public let bytes: [UInt8]
  public let identity: Identity
  /// Where it came from, for messages.
  public let name: String
  /// The push's image as segments against these bytes, planned before (`otactl delta`): used
  /// instead of planning again when they cover the image and read inside these bytes.
  public let segments: [DeltaSegment]?
  /// The push's image as zstd frames against these bytes (`otactl delta`), sent where the device
  /// takes frames (features bit 4) and they cover the image exactly.
  public let frames: [DeltaFrame]?

  public init(bytes: [UInt8], name: String, segments: [DeltaSegment]? = nil, frames: [DeltaFrame]? = nil) {
    self.bytes = bytes
    self.name = name
    self.segments = segments
    self.frames = frames
    identity = Identity(size: UInt32(clamping: bytes.count), crc32: CRC32.checksum(bytes))
  }
}
