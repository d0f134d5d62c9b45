import Logging
import OTAChecksum
import OTADaemon
import OTALink
import OTATestSupport
import Testing

/// docs/PROTOCOL.md, Data: dropped writes are counted and otad logs them: a broken operation's
/// reason (the first of a connection at warning, the rest at debug) and the counts at disconnect.
@Suite struct DropLogContractTests {
  @Test func brokenOperationsAreLoggedOnceAtWarningAndCountedAtDisconnect() throws {
    // [P-OP-8] [P-DATA-4]
    let image = DeviceFixture.image(size: 2000, seed: 3)
    let prepare = ProtocolContractTests.prepare(size: 2000, crc32: CRC32.checksum(image))
    let unknownKind = ProtocolContractTests.le32(0) + [0x05, 1, 2, 3]
    let script: [[PeripheralEvent]] = [
      [.connected(mtu: 247)], [.controlWrite([0x08, 0x02, 0, 0, 0])], [.controlWrite(prepare)],
      [.dataWrite(unknownKind)], [.dataWrite(unknownKind)], [.dataWrite([1, 2])], [.disconnected],
    ]
    let log = CapturedLog()
    let service = DeviceService(
      host: try DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096).makeHost(),
      link: SMPOverBluetoothServiceTests.ScriptedLink(script), logger: log.logger)
    #expect(throws: LinkError.self) { try service.run(stopSignals: nil) }  // the script is spent
    // With operations on, every data write is one: the 2-byte write is a broken one too.
    let dropped = log.messages.filter { $0.contains("dropped a data operation") }
    #expect(dropped.count == 3)
    #expect(dropped.first == "warning dropped a data operation: malformed operation: operation kind 5")
    #expect(
      dropped.dropFirst().allSatisfy { $0.hasPrefix("debug ") }, "the rest of the connection's at debug")
    let disconnect = try #require(log.lines.first { $0.text == "info central disconnected" })
    #expect(disconnect.metadata["chunks-dropped"] == "3")
    #expect(disconnect.metadata["operations-rejected"] == "3")
    #expect(service.info().chunksDropped == 3)
  }
}
