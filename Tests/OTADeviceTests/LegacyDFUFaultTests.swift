import Logging
import OTADaemon
import OTAFaults
import OTALink
import OTANordicDFU
import OTATestSupport
import Testing

/// Faults on demand (docs/APP-TESTING.md) against Nordic's Legacy DFU in the daemon's loop: each
/// fires where a Legacy DFU client meets it, as nrf-ota would see it.
@Suite struct LegacyDFUFaultTests {
  static let firmware = LegacyDFUTests.firmware

  /// nrf-ota's whole flow as link events, ending with SYS RESET (so that the loop returns).
  static func flow(prn: UInt8 = 10) -> [PeripheralEvent] {
    var events: [PeripheralEvent] = [
      .nordicDFUControl(.legacy, central: ScriptedNordicDFULink.central, [0x01, 0x04]),
      .nordicDFUPacket(
        .legacy, central: ScriptedNordicDFULink.central, LegacyDFUTests.sizes(UInt32(firmware.count))),
      .nordicDFUControl(.legacy, central: ScriptedNordicDFULink.central, [0x02, 0x00]),
      .nordicDFUPacket(.legacy, central: ScriptedNordicDFULink.central, LegacyDFUTests.initPacket()),
      .nordicDFUControl(.legacy, central: ScriptedNordicDFULink.central, [0x02, 0x01]),
      .nordicDFUControl(.legacy, central: ScriptedNordicDFULink.central, [0x08, prn, 0]),
      .nordicDFUControl(.legacy, central: ScriptedNordicDFULink.central, [0x03]),
    ]
    for start in stride(from: 0, to: firmware.count, by: 20) {
      events.append(
        .nordicDFUPacket(
          .legacy, central: ScriptedNordicDFULink.central,
          Array(firmware[start..<min(start + 20, firmware.count)])))
    }
    return events + [
      .nordicDFUControl(.legacy, central: ScriptedNordicDFULink.central, [0x04]),
      .nordicDFUControl(.legacy, central: ScriptedNordicDFULink.central, [0x06]),
    ]
  }

  func run(_ faults: [String], _ script: [PeripheralEvent] = flow()) throws -> (
    DeviceService.Stop, ScriptedNordicDFULink
  ) {
    let state = try TemporaryDirectory(label: "legacy-dfu-faults")
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    let link = ScriptedNordicDFULink(script)
    let service = DeviceService(host: try fixture.makeHost(), link: link, logger: Logger(label: "test"))
    service.nordicDFU[.legacy] = LegacyDFUDevice()
    service.allowFaults(stateDirectory: state.url.path, configured: try faults.map(Fault.init(parsing:)))
    defer { service.closeFaultControl() }
    return (try service.run(stopSignals: nil), link)
  }

  @Test func theSessionReportTellsTheLegacyDFUSessionAndItsFault() throws {
    let state = try TemporaryDirectory(label: "legacy-dfu-session")
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    let link = ScriptedNordicDFULink(Self.flow())
    let service = DeviceService(host: try fixture.makeHost(), link: link, logger: Logger(label: "test"))
    service.nordicDFU[.legacy] = LegacyDFUDevice()
    service.allowFaults(
      stateDirectory: state.url.path, configured: [try Fault(parsing: "corrupt-chunk after=50%")])
    defer { service.closeFaultControl() }
    var recorder = SessionRecorder()
    var clock: UInt64 = 1_795_816_745_000_000
    service.recordsDataWrites = true
    service.observe = { activity in
      clock += 1000
      recorder.record(activity, at: clock)
    }
    #expect(try service.run(stopSignals: nil) == .restart)
    let sessions = recorder.takeEnded()
    let text = try #require(sessions.first { $0.central == "Legacy DFU central" }?.text)
    #expect(text.contains("START DFU, image type 4"), "\(text)")
    #expect(
      text.contains("answered 0x10 0x01 0x01") && text.contains("PACKET RECEIPT NOTIF REQ, every 10 packets"))
    #expect(text.contains("fault 1 fired (1 of 1): corrupt-chunk after=50% times=1"))
    #expect(text.contains("1 corrupted by a fault"), "\(text)")
    #expect(text.contains("VALIDATE: the firmware's CRC16 is 0x"))
    #expect(text.contains("answered 0x10 0x04 0x05"))
    #expect(text.contains("ended: the device restarted"))
  }

  @Test func withoutFaultsTheFlowValidates() throws {
    let (stop, link) = try run([])
    #expect(stop == .restart)
    #expect(link.notifications.last == [0x10, 0x04, 0x01])
  }

  @Test func aRefusedValidateAnswersTheStatusAsked() throws {
    let (_, link) = try run(["refuse at=dfu-validate status=crc-error"])
    #expect(link.notifications.last == [0x10, 0x04, 0x05])
  }

  /// The device counts what it received: after a lost packet its receipts come a packet later
  /// than the client's count expects them (nrf-ota, waiting for one after its 10th packet, times
  /// out, or sees fewer bytes than it sent), and the image never completes.
  @Test func aLostPacketLeavesTheReceiptsBehindTheClientsCount() throws {
    let (_, link) = try run(["lose-chunk after=50%"])
    let receipts = link.notifications.filter { $0.first == 0x11 }.map {
      UInt32($0[1]) | UInt32($0[2]) << 8 | UInt32($0[3]) << 16 | UInt32($0[4]) << 24
    }
    #expect(
      receipts.count == 59 && receipts.last == 11_800, "599 packets of 600 arrived: \(receipts.suffix(3))")
    #expect(!link.notifications.contains([0x10, 0x03, 0x01]), "the image never completes")
    #expect(link.notifications.last == [0x10, 0x04, 0x02], "VALIDATE of an incomplete image: invalid state")
  }

  @Test func aCorruptedPacketFailsValidateWithACRCError() throws {
    let (_, link) = try run(["corrupt-chunk after=50%"])
    #expect(link.notifications.contains([0x10, 0x03, 0x01]))
    #expect(link.notifications.last == [0x10, 0x04, 0x05])
  }

  @Test func aDroppedLinkEndsTheSession() throws {
    let (_, link) = try run(["drop-link after=30%"])
    #expect(link.drops == 1)
    #expect(!link.notifications.contains([0x10, 0x03, 0x01]))
    #expect(
      link.notifications.last == [0x10, 0x04, 0x02], "VALIDATE after the drop: no session, invalid state")
  }

  @Test func aRestartAtActivateLeavesTheImageValidatedButNotOnTrial() throws {
    let script =
      Self.flow().dropLast() + [
        PeripheralEvent.nordicDFUControl(.legacy, central: ScriptedNordicDFULink.central, [0x05])
      ]
    let (stop, link) = try run(["restart at=dfu-activate"], Array(script))
    #expect(stop == .restart)
    #expect(link.notifications.last == [0x10, 0x04, 0x01])
  }
}
