import OTAReceiverHost
import OTASMPServer
import Testing

/// docs/PROTOCOL.md, The session: one protocol at a time; an SMP upload holds the device for 30 s
/// after its last chunk, on the loop's clock the service passes to the host.
@Suite struct SMPServiceQuietTests {
  @Test func anUploadHoldsTheDeviceFor30sAfterItsLastChunk() throws {
    // [P-SESS-5]
    var host = try DeviceFixture(slotCapacity: 64 * 1024).makeHost()
    var service = SMPService()
    var client = SMPDeviceTests.Client()
    let image = try SMPDeviceTests.image()
    #expect(!host.transaction.heldByAnother(.ota), "no upload yet")
    _ = try service.answer(client.upload(image[0..<1000], at: 0, of: image), host: &host, now: .seconds(5))
    host.advance(to: .seconds(5) + .milliseconds(29_999))
    #expect(host.transaction.heldByAnother(.ota))
    host.advance(to: .seconds(35))
    #expect(!host.transaction.heldByAnother(.ota), "30 s without a chunk: no longer under way")
    // The next chunk starts the 30 s again.
    _ = try service.answer(
      client.upload(image[1000..<2000], at: 1000, of: image), host: &host, now: .seconds(40))
    host.advance(to: .seconds(69))
    #expect(host.transaction.heldByAnother(.ota))
  }
}
