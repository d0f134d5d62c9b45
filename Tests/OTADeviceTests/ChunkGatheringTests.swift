import OTAChecksum
import OTAEngine
import OTAReceiverHost
import OTAStorage
import OTAStorageTesting
import OTAWire
import Testing

/// Contiguous chunks reach the slot together, yet a window is answered only once its bytes are
/// written and synced, and a gathered write that fails answers its window with "storage error".
@Suite struct ChunkGatheringTests {
  static let newVersion = Version(major: 4, minor: 0, revision: 0)
  static let image = DeviceFixture.image(size: 4096, seed: 13)

  /// A host at MTU 23 (16-byte chunks) with a PREPARE for `image` done, and every chunk of the
  /// first 2048 bytes delivered.
  func hostWithOneWindowOfChunks(_ fixture: DeviceFixture) throws -> ReceiverHost {
    var host = try fixture.makeHost()
    _ = try host.handle(.connected(mtu: 23))
    let prepare = Request.prepare(size: UInt32(Self.image.count), crc32: 0, version: Self.newVersion)
    _ = try host.handle(.control(prepare.encoded, now: .zero))
    for offset in stride(from: 0, to: 2048, by: 16) {
      let chunk = DataChunk(offset: UInt32(offset), payload: Self.image[offset..<offset + 16])
      _ = try host.handle(.data(chunk.encoded, now: .zero))
    }
    return host
  }

  var window: Request {
    .window(offset: 0, length: 2048, crc32: CRC32.checksum(Self.image[0..<2048]))
  }

  @Test func aWindowOfSmallChunksIsOneSlotWriteAndDurableBeforeItsAnswer() throws {
    // [P-REQ-3]
    let fixture = DeviceFixture(slotCapacity: 32 * 1024, windowCapacity: 4096)
    var host = try hostWithOneWindowOfChunks(fixture)
    let operationsBefore = fixture.medium.operationCount
    #expect(
      fixture.medium.slotBytes(.b).prefix(2048).allSatisfy { $0 == 0 }, "the chunks are held, not written")
    let outputs = try host.handle(.control(window.encoded, now: .zero))
    #expect(outputs == [.notify(Response(.window, .success, .offset(2048)).encoded)])
    // One write, the read-back for the CRC, the sync, and the journal's replace: not 128 writes.
    #expect(fixture.medium.operationCount - operationsBefore < 10)
    #expect(Array(fixture.medium.durableSlotBytes(.b).prefix(2048)) == Array(Self.image[0..<2048]))
  }

  @Test func aGatheredWriteThatFailsAnswersItsWindowWithStorageError() throws {
    // [P-STOR-2]
    let fixture = DeviceFixture(slotCapacity: 32 * 1024, windowCapacity: 4096)
    var host = try hostWithOneWindowOfChunks(fixture)
    fixture.medium.inject(.ioError, atOperation: 0, of: [.slotWrite])
    let outputs = try host.handle(.control(window.encoded, now: .zero))
    #expect(outputs == [.notify(Response(.window, .storageError, .offset(0)).encoded)])
    #expect(host.engine.transferStatus.committedOffset == 0)
    #expect(fixture.medium.pendingFaultCount == 0)
  }

  @Test func aFailureWhileChunksKeepComingIsKeptForTheWindow() throws {
    let fixture = DeviceFixture(slotCapacity: 32 * 1024, windowCapacity: 4096)
    var host = try hostWithOneWindowOfChunks(fixture)
    // A chunk that does not continue the held ones sends them to the slot, and that write fails.
    fixture.medium.inject(.ioError, atOperation: 0, of: [.slotWrite])
    let late = DataChunk(offset: 3072, payload: Self.image[3072..<3088])
    #expect(try host.handle(.data(late.encoded, now: .zero)).isEmpty)
    let outputs = try host.handle(.control(window.encoded, now: .zero))
    #expect(outputs == [.notify(Response(.window, .storageError, .offset(0)).encoded)])
  }
}
