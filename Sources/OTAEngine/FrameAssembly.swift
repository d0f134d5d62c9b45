import OTAWire

/// The zstd frames being reassembled from their parts (features bit 4), keyed by the target offset
/// their bytes start at. Parts may come in any order and more than once; a frame is complete when
/// its last part has come and every byte before that part's end has too. Bounded: at most
/// `maxFrames` frames and `maxBytes` bytes held at once, each frame at most `maxFrameSize` bytes.
/// Pure: no IO, no clock.
public struct FrameAssembly: Sendable, Equatable {
  struct Frame: Sendable, Equatable {
    var bytes: [UInt8] = []
    var present = ByteRanges()
    /// The frame's size once its last part came.
    var size: UInt32?
  }

  public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// The part would make its frame longer than a frame may be.
    case frameTooLarge(end: UInt64, limit: UInt32)
    /// A part past the end its frame's last part set, or a last part that moves that end.
    case pastTheLastPart(end: UInt64, size: UInt32)
    /// Holding it would pass the bytes or frames the device holds at once.
    case full(frames: Int, bytes: Int)

    public var description: String {
      switch self {
      case .frameTooLarge(let end, let limit):
        "a zstd part ending at \(end), past the frame limit of \(limit) bytes"
      case .pastTheLastPart(let end, let size):
        "a zstd part ending at \(end) where its frame's last part ended it at \(size)"
      case .full(let frames, let bytes): "zstd parts held already: \(frames) frames, \(bytes) bytes"
      }
    }
  }

  public let maxFrameSize: UInt32
  public let maxBytes: Int
  public let maxFrames: Int
  var frames: [UInt32: Frame] = [:]
  /// The bytes held, over every frame.
  public private(set) var heldBytes = 0

  public init(maxFrameSize: UInt32, maxBytes: Int, maxFrames: Int) {
    self.maxFrameSize = maxFrameSize
    self.maxBytes = maxBytes
    self.maxFrames = maxFrames
  }

  public var heldFrames: Int { frames.count }

  /// Whether parts of the frame at `target` are held.
  public func holds(_ target: UInt32) -> Bool { frames[target] != nil }

  /// Adds a part of the frame at `target`; returns the frame's bytes when this part completed it
  /// (the frame is no longer held then).
  public mutating func add(
    target: UInt32, position: UInt32, last: Bool, bytes: ArraySlice<UInt8>
  ) throws(Refusal) -> [UInt8]? {
    let end = UInt64(position) + UInt64(bytes.count)
    guard end <= UInt64(maxFrameSize) else { throw .frameTooLarge(end: end, limit: maxFrameSize) }
    let range = position..<UInt32(end)
    // What the checks need of the frame held, read without keeping a copy of it: a copy would share
    // its bytes with the dictionary's, and the change below would then copy them whole, per part.
    let held = frames[target].map {
      (
        size: $0.size, highest: $0.present.ranges.last?.upperBound, has: $0.present.contains(range),
        count: $0.bytes.count
      )
    }
    if held == nil, frames.count >= maxFrames { throw .full(frames: frames.count, bytes: heldBytes) }
    if let size = held?.size, end > UInt64(size) || last && end != UInt64(size) {
      throw .pastTheLastPart(end: end, size: size)
    }
    if last, let highest = held?.highest, UInt64(highest) > end {
      throw .pastTheLastPart(end: UInt64(highest), size: UInt32(end))
    }
    let stores = !range.isEmpty && held?.has != true
    let growth = stores ? max(0, Int(end) - (held?.count ?? 0)) : 0
    guard heldBytes + growth <= maxBytes else { throw .full(frames: frames.count, bytes: heldBytes) }
    // Taken out of the dictionary, so that its bytes are changed in place.
    var frame = frames.removeValue(forKey: target) ?? Frame()
    if stores {
      if growth > 0 { frame.bytes.append(contentsOf: repeatElement(0, count: growth)) }
      frame.bytes.replaceSubrange(Int(position)..<Int(end), with: bytes)
      frame.present.insert(range)
      heldBytes += growth
    }
    if last { frame.size = UInt32(end) }
    if let size = frame.size, frame.present.contains(0..<size) {
      heldBytes -= frame.bytes.count
      return frame.bytes
    }
    frames[target] = frame
    return nil
  }

  /// Forgets the frames starting below `offset` (their bytes were committed another way) or, with
  /// `all`, every frame (a disconnect, a new transfer).
  public mutating func drop(below offset: UInt32) {
    for target in frames.keys where target < offset {
      heldBytes -= frames[target]?.bytes.count ?? 0
      frames[target] = nil
    }
  }

  public mutating func dropAll() {
    frames.removeAll()
    heldBytes = 0
  }
}
