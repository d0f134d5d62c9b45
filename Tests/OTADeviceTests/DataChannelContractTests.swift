import Logging
import OTAChecksum
import OTAConfiguration
import OTADaemon
import OTAEngine
import OTALink
import OTAWire
import Testing

/// docs/PROTOCOL.md, "Data over an L2CAP channel": the PSM where a central finds it, the SDU as a
/// chunk larger than GATT allows, hostile SDUs, and the configuration that turns the channel on.
@Suite struct DataChannelContractTests {
  /// A link that offers a channel on `psm` and does nothing else.
  final class ChannelLink: PeripheralLink {
    let psm: UInt16
    init(psm: UInt16) { self.psm = psm }
    var descriptors: [Int32] { [] }
    var nextDeadline: Duration? { nil }
    func service(readable: Set<Int32>, now: Duration, value: CharacteristicValue) throws(LinkError)
      -> [PeripheralEvent]
    { [] }
    func notify(_ bytes: [UInt8]) {}
    func disconnect() {}
    var dataChannelPSM: UInt16 { psm }
  }

  static func service(psm: UInt16) throws -> DeviceService {
    DeviceService(
      host: try DeviceFixture(slotCapacity: 4096).makeHost(), link: ChannelLink(psm: psm),
      logger: Logger(label: "test"))
  }

  /// "Info offset 78: L2CAP PSM u16 ... 0 when the device offers none" and "L2CAP PSM
  /// d3df0005: u16 little-endian ... the same value as Info offset 78".
  @Test func infoAndThePSMCharacteristicNameTheLinksChannel() throws {
    // [P-GATT-5] [P-CHAN-1] [P-INFO-25]
    let offered = try Self.service(psm: 0x0085)
    let info = offered.value(of: .info, mtu: 247)
    #expect(info.count == 114 && Array(info[78..<80]) == [0x85, 0x00])
    #expect(offered.value(of: .l2capPSM, mtu: 247) == [0x85, 0x00])
    let none = try Self.service(psm: 0)
    #expect(Array(none.value(of: .info, mtu: 247)[78..<80]) == [0, 0])
    #expect(none.value(of: .l2capPSM, mtu: 23) == [0, 0])
  }

  /// "one chunk per SDU: offset u32, then 1 to SDU − 4 image bytes ... not bound by the ATT MTU".
  @Test func aChunkLargerThanGattAllowsIsStoredWhole() throws {
    // [P-CHAN-5] [P-CHAN-6] [SEC-LIMIT-2]
    var bench = try ProtocolContractTests.prepared(size: 10_000)
    let sdu = ProtocolContractTests.chunk(0, ProtocolContractTests.image[0..<4096])
    #expect(sdu.count == 4100)
    try bench.data(sdu)
    let window = ProtocolContractTests.window(0, 4096, ProtocolContractTests.crc(0..<4096))
    #expect(try bench.controlBytes(window) == [ProtocolContractTests.windowAnswer(0x00, 4096)])
    #expect(bench.host.info().chunksDropped == 0)
  }

  /// "the same window rules: an SDU whose chunk reaches past the window, or lies about its offset,
  /// is dropped and counted".
  @Test func anSDUWithALyingOffsetIsDroppedAndCountedAndNothingIsLost() throws {
    // [P-CHAN-7] [SEC-ATK-54]
    var bench = try ProtocolContractTests.prepared(size: 10_000)
    let image = ProtocolContractTests.image
    try bench.data(ProtocolContractTests.chunk(8000, image[0..<4096]))  // past the image's end
    try bench.data(ProtocolContractTests.chunk(0xFFFF_F000, image[0..<4096]))  // far outside the image
    #expect(bench.host.info().chunksDropped == 2)
    try bench.data(ProtocolContractTests.chunk(0, image[0..<4096]))
    let window = ProtocolContractTests.window(0, 4096, ProtocolContractTests.crc(0..<4096))
    #expect(try bench.controlBytes(window) == [ProtocolContractTests.windowAnswer(0x00, 4096)])
  }

  /// "While a central has turned bit 1 on with FEATURES it is one data operation ... at most SDU
  /// bytes in all": a raw operation filling otad's 4100-byte SDU, then a deflate operation.
  @Test func withOperationsOnAnSDUIsOneOperation() throws {
    // [P-CHAN-5] [SEC-ATK-55]
    let target = DeviceFixture.image(size: 4096, seed: 17)
    var bench = try OperationContractTests.bench(target: target)
    let raw = OperationContractTests.op(0, 0x00, Array(target[0..<4095]))
    #expect(raw.count == 4100)
    try bench.data(raw)
    let deflated = RawDeflate.compress(target[4095..<4096])
    try bench.data(OperationContractTests.op(4095, 0x01, OperationContractTests.le32(1) + deflated))
    let window = ProtocolContractTests.window(0, 4096, CRC32.checksum(target))
    #expect(try bench.controlBytes(window) == [ProtocolContractTests.windowAnswer(0x00, 4096)])
    #expect(bench.host.engine.statistics.operationsApplied == 2)
    #expect(bench.host.info().chunksDropped == 0)
  }

  @Test func theChannelIsOnByDefaultAndConfigurable() throws {
    // [P-CHAN-2]
    #expect(DaemonConfiguration().l2cap && DaemonConfiguration().l2capPSM == 0)
    let off = try DaemonConfiguration(toml: "[link]\nl2cap = false\nl2cap-psm = 0x81\n")
    #expect(!off.l2cap && off.l2capPSM == 0x81)
    #expect(throws: ConfigurationError.self) { try DaemonConfiguration(toml: "[link]\nl2cap-psm = 0x1001\n") }
    #expect(throws: ConfigurationError.self) { try DaemonConfiguration(toml: "[link]\nl2cap = \"yes\"\n") }
  }
}
