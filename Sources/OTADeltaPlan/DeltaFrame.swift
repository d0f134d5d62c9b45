import OTAChecksum

/// One zstd frame of a release against its base (features bit 4): target bytes
/// `[start, start + length)` coded against the whole base as the frame's prefix. A push sends it in
/// parts; the device reassembles it and decodes it against its running image, which must be the base.
public struct DeltaFrame: Equatable, Sendable {
  public var start: UInt32
  public var length: UInt32
  public var bytes: [UInt8]

  public init(start: UInt32, length: UInt32, bytes: [UInt8]) {
    self.start = start
    self.length = length
    self.bytes = bytes
  }

  public var end: UInt32 { start + length }

  /// otactl's frames: 1 MiB of the target each (the device's default max frame length), at zstd's
  /// level 22. Frames of one window cost a quarter more bytes; 1 MiB ones 1.03× a single stream.
  public static let defaultLength: UInt32 = 1 << 20
  public static let defaultLevel: Int32 = 22

  /// `target` cut into frames of `length` bytes from offset 0, each against the whole `base`; nil
  /// when libzstd fails (no memory for the base's dictionary).
  public static func frames(
    target: [UInt8], base: [UInt8], length: UInt32 = defaultLength, level: Int32 = defaultLevel
  ) -> [DeltaFrame]? {
    guard length > 0, !base.isEmpty else { return nil }
    guard let encoder = ZstdFrameEncoder(base: base, level: level, frameLength: Int(length)) else {
      return nil
    }
    var frames: [DeltaFrame] = []
    var start = 0
    while start < target.count {
      let end = min(target.count, start + Int(length))
      guard let bytes = encoder.frame(target[start..<end]) else { return nil }
      frames.append(DeltaFrame(start: UInt32(start), length: UInt32(end - start), bytes: bytes))
      start = end
    }
    return frames
  }

  /// Whether `frames` cover `[0, size)` exactly, back to back.
  public static func cover(_ frames: [DeltaFrame], size: UInt32) -> Bool {
    var next: UInt32 = 0
    for frame in frames {
      guard frame.start == next, frame.length > 0, !frame.bytes.isEmpty, UInt64(frame.end) <= UInt64(size)
      else { return false }
      next = frame.end
    }
    return next == size
  }
}
