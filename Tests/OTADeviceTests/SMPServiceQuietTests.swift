import OTASMPServer
import Testing

/// docs/PROTOCOL.md, The session: "PREPARE answers 0x0C busy while an SMP upload is under way (an
/// upload chunk within the last 30 s)": the service's own clock for it.
@Suite struct SMPServiceQuietTests {
  @Test func anUploadIsUnderWayFor30sAfterItsLastChunk() throws {
    // [P-SESS-5]
    var host = try DeviceFixture(slotCapacity: 64 * 1024).makeHost()
    var service = SMPService()
    var client = SMPDeviceTests.Client()
    let image = try SMPDeviceTests.image()
    #expect(!service.uploading(now: .zero), "no upload yet")
    _ = try service.answer(
      client.upload(image[0..<1000], at: 0, of: image), host: &host, otaBusy: false, now: .seconds(5))
    #expect(service.uploading(now: .seconds(5) + .milliseconds(29_999)))
    #expect(!service.uploading(now: .seconds(35)), "30 s without a chunk: no longer under way")
    // The next chunk starts the 30 s again.
    _ = try service.answer(
      client.upload(image[1000..<2000], at: 1000, of: image), host: &host, otaBusy: false, now: .seconds(40))
    #expect(service.uploading(now: .seconds(69)))
  }
}
