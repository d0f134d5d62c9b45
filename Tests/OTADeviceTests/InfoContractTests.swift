import Logging
import OTALink
import OTAWire
import Testing

@testable import OTADaemon
@testable import OTAEngine
@testable import OTAReceiverHost

/// docs/PROTOCOL.md's read-only values that need the daemon's own state: the dropped-chunk count
/// at its limit, and the Device Information Service's firmware revision.
@Suite struct InfoContractTests {
  @Test func theDroppedChunkCountSaturatesInsteadOfWrapping() throws {
    // [P-INFO-23]
    var host = try DeviceFixture(slotCapacity: 4096).makeHost()
    host.engine.statistics.chunksDropped = Int(UInt32.max) - 1
    #expect(Array(host.info().encoded[70..<74]) == [0xFE, 0xFF, 0xFF, 0xFF])
    _ = try host.handle(.data([0, 0, 0, 0], now: .zero))  // 4 bytes: dropped, counted
    _ = try host.handle(.data([0, 0, 0, 0], now: .zero))
    #expect(host.engine.statistics.chunksDropped == Int(UInt32.max) + 1)
    #expect(Array(host.info().encoded[70..<74]) == [0xFF, 0xFF, 0xFF, 0xFF], "held at the top, not 0")
  }

  @Test func theFirmwareRevisionIsTheRunningVersionAsText() throws {
    // [P-GATT-7] [P-GATT-8]
    func revision(_ host: ReceiverHost) -> String {
      let service = DeviceService(
        host: host, link: DataChannelContractTests.ChannelLink(psm: 0), logger: Logger(label: "test"))
      return String(decoding: service.value(of: .firmwareRevision, mtu: 23), as: UTF8.self)
    }
    var bench = try ProtocolBench()
    #expect(revision(bench.host) == "1.0.0+0", "the factory version")
    let version = Version(major: 1, minor: 2, revision: 3, build: 4)
    try bench.install(Array(ProtocolContractTests.image[0..<600]), version: version)
    #expect(revision(bench.host) == "1.2.3+4")
  }
}
