import OTAChecksum
import Testing

@testable import OTASender
@testable import OTAWire

/// The sender over an L2CAP data channel: chunks sized by the channel's SDU, not the ATT MTU, and
/// back to the ATT size on the next connection (a channel belongs to one connection).
@Suite struct SenderDataChannelTests {
  static let image: [UInt8] = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
  static let version = Version(major: 2, minor: 0, revision: 0)

  static func info() -> [UInt8] {
    InfoRecord(
      state: .idle, runningSlot: .a, flags: [],
      slotVersions: SlotPair(a: Version(major: 1, minor: 0, revision: 0), b: .zero),
      inactiveSlotContent: .unknown,
      slotCapacity: 1 << 20, windowCapacity: 16384, maxChunkPayload: 240, transfer: .idle,
      transferVersion: .zero, lastOutcome: .none, l2capPSM: 0x81
    ).encoded
  }

  var sender = SenderEngine(image: image, configuration: SenderConfiguration(version: version))

  /// Connected at MTU 247, the channel (if any) reported, Info read, PREPARE answered (max chunk
  /// payload 240, as the device computes from the ATT MTU), credit given: the chunks sent.
  mutating func firstChunks(channelPayload: Int?) -> [DataChunk] {
    _ = sender.handle(.start(now: .zero))
    _ = sender.handle(.connected(mtu: 247, now: .zero))
    if let channelPayload { _ = sender.handle(.dataChannel(maxChunkPayload: channelPayload, now: .zero)) }
    _ = sender.handle(.info(Self.info(), now: .zero))
    _ = sender.handle(.notification(Response(.status, .success, .status(.idle)).encoded, now: .zero))
    let prepared = Response(.prepare, .success, .prepared(windowCapacity: 16384, maxChunkPayload: 240))
    _ = sender.handle(.notification(prepared.encoded, now: .zero))
    let actions = sender.handle(.writable(count: 4, now: .zero))
    return actions.compactMap {
      if case .writeData(let bytes) = $0 { try? DataChunk(bytes: bytes) } else { nil }
    }
  }

  @Test mutating func chunksFillTheChannelsSDUNotTheATTMTU() {
    // [P-CHAN-6]
    let chunks = firstChunks(channelPayload: 4096)
    #expect(Array(chunks.map(\.offset).prefix(2)) == [0, 4096])
    #expect(chunks.first?.payload.count == 4096, "4096 image bytes per SDU, past GATT's 240")
    #expect(chunks.allSatisfy { $0.payload.elementsEqual(Self.image[Int($0.offset)..<Int($0.end)]) })
  }

  @Test mutating func withoutAChannelChunksKeepTheDevicesATTSize() {
    let chunks = firstChunks(channelPayload: nil)
    #expect(chunks.first?.payload.count == 240)
  }

  @Test mutating func aReconnectForgetsTheChannel() {
    _ = firstChunks(channelPayload: 4096)
    _ = sender.handle(.disconnected(now: .zero))
    _ = sender.handle(.connected(mtu: 247, now: .seconds(1)))
    #expect(sender.channelChunkPayload == nil)
    #expect(sender.chunkPayload <= 240)
  }
}
