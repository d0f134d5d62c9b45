import Testing

@testable import OTASender
@testable import OTAWire

/// The sender's chunk size: the write size it is configured with, at the link's MTU and data
/// length, within what the device accepts.
@Suite struct SenderWriteSizeTests {
  static let image: [UInt8] = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
  static let version = Version(major: 2, minor: 0, revision: 0)

  /// Connects at `mtu`, prepares with the device's `maxChunk`, gives credit for three chunks and
  /// returns their sizes.
  static func chunkSizes(
    mtu: ATTMTU, maxChunk: UInt16, writeSize: WriteSize = .auto, dataLength: Int = 251
  ) -> [Int] {
    var sender = SenderEngine(
      image: image,
      configuration: SenderConfiguration(
        version: version, writeSize: writeSize, linkLayerDataLength: dataLength))
    let info = InfoRecord(
      state: .idle, runningSlot: .a, flags: [],
      slotVersions: SlotPair(a: Version(major: 1, minor: 0, revision: 0), b: .zero),
      inactiveSlotContent: .unknown,
      slotCapacity: 8192, windowCapacity: 8192, maxChunkPayload: maxChunk, transfer: .idle,
      transferVersion: .zero,
      lastOutcome: .none)
    _ = sender.handle(.start(now: .zero))
    _ = sender.handle(.connected(mtu: mtu, now: .zero))
    _ = sender.handle(.info(info.encoded, now: .zero))
    _ = sender.handle(.notification(Response(.status, .success, .status(.idle)).encoded, now: .zero))
    let prepared = Response(.prepare, .success, .prepared(windowCapacity: 8192, maxChunkPayload: maxChunk))
    _ = sender.handle(.notification(prepared.encoded, now: .zero))
    return sender.handle(.writable(count: 3, now: .zero)).compactMap {
      if case .writeData(let bytes) = $0 { bytes.count } else { nil }
    }
  }

  @Test func fillsTwoWholePacketsAtMTU517() {
    // The device accepts 506 image bytes (MTU 517 − 3 − 4, BlueZ's 510 cap); the sender picks
    // 495-byte writes: 491 image bytes each.
    #expect(Self.chunkSizes(mtu: 517, maxChunk: 506) == [495, 495, 495])
  }

  @Test func followsTheDataLength() {
    #expect(
      Self.chunkSizes(mtu: 247, maxChunk: 240, dataLength: 27) == [236, 236, 236], "9 whole packets of 27")
    #expect(Self.chunkSizes(mtu: 247, maxChunk: 240) == [244, 244, 244])
  }

  @Test func aFixedSizeAndTheDeviceLimitBoundIt() {
    // [P-DATA-1]
    #expect(Self.chunkSizes(mtu: 517, maxChunk: 506, writeSize: .fixed(510)) == [510, 510, 510])
    #expect(Self.chunkSizes(mtu: 517, maxChunk: 506, writeSize: .fixed(200)) == [200, 200, 200])
    #expect(Self.chunkSizes(mtu: 517, maxChunk: 100) == [104, 104, 104], "the device's max chunk wins")
  }
}
