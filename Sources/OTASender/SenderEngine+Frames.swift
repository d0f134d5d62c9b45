import OTADeltaPlan
import OTAWire

extension SenderEngine {
  /// The base's frames when this device can take them: it announces features bit 4, its max frame
  /// length and receive span hold the longest, it knows its running image (the frames' prefix),
  /// and they cover this image exactly.
  func usableFrames(_ base: BaseImage, _ info: InfoRecord) -> [DeltaFrame]? {
    guard let frames = base.frames, !frames.isEmpty,
      info.features.isSuperset(of: [.operations, .zstdFrames]),
      info.runningImageSize == base.identity.size, DeltaFrame.cover(frames, size: size)
    else { return nil }
    let longest = frames.map(\.length).max() ?? 0
    let span = max(info.receiveSpan, info.windowCapacity)
    guard longest <= info.maxFrameLength, longest <= span else { return nil }
    return frames
  }

  /// The payload bytes one zstd part carries in a write of `budget` bytes.
  static func framePartRoom(budget: Int, packed: Bool) -> Int {
    budget - DataOperation.overhead(.zstdPart) - (packed ? PackedOperations.entryHeaderSize : 0)
  }

  /// The bytes on air of sending every frame in parts.
  static func framesBytesOnAir(_ frames: [DeltaFrame], budget: Int, packed: Bool) -> UInt64 {
    let room = framePartRoom(budget: budget, packed: packed)
    let header = budget - room
    return frames.reduce(0) { total, frame in
      let parts = (frame.bytes.count + room - 1) / room
      return total + UInt64(frame.bytes.count + parts * header)
    }
  }

  /// Where the next frame not yet sent starts: the image's end when none is left (or frames are off).
  func nextFrameStart(_ transfer: Transfer) -> UInt32 {
    guard framesOn, let activeFrames, transfer.nextFrame < activeFrames.count else { return size }
    return activeFrames[transfer.nextFrame].start
  }

  /// Sends the next part of the next frame when that frame lies wholly inside the device's receive
  /// span (the device decodes it only there); false when there is none to send now.
  mutating func sendFramePart(_ transfer: inout Transfer, _ out: inout [SenderAction]) -> Bool {
    guard framesOn, let activeFrames, transfer.nextFrame < activeFrames.count else { return false }
    let frame = activeFrames[transfer.nextFrame]
    guard frame.start >= committed,
      UInt64(frame.end) - UInt64(committed) <= UInt64(max(receiveSpan, windowCapacity))
    else { return false }
    let room = Self.framePartRoom(budget: chunkPayload + DataChunk.headerSize, packed: packedOn)
    let position = transfer.nextFramePosition
    let end = min(frame.bytes.count, position + max(1, room))
    let last = end == frame.bytes.count
    let operation = DataOperation(
      offset: frame.start,
      body: .zstdPart(position: UInt32(position), last: last, bytes: frame.bytes[position..<end]))
    let write = packedOn ? PackedOperations.pack([operation.encoded]) : operation.encoded
    report.operationsSent += 1
    report.framePartsSent += 1
    // A part rebuilds nothing by itself: the last one stands for the frame's target bytes.
    send(write, covering: last ? frame.start..<frame.end : frame.start..<frame.start, &transfer, &out)
    if last {
      report.framesSent += 1
      transfer.nextFrame += 1
      transfer.nextFramePosition = 0
      if transfer.framed.isEmpty || transfer.framed.upperBound != frame.start {
        transfer.framed = frame.start..<frame.end
      } else {
        transfer.framed = transfer.framed.lowerBound..<frame.end
      }
    } else {
      transfer.nextFramePosition = end
    }
    return true
  }
}
