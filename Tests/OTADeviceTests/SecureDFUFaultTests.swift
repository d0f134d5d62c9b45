import Foundation
import Logging
import OTAChecksum
import OTADaemon
import OTAFaults
import OTALink
import OTANordicDFU
import OTATestSupport
import Testing

/// Faults on demand (docs/APP-TESTING.md) against Nordic's Secure DFU in the daemon's loop: each
/// fires where nrfutil's Secure DFU client meets it, and answers as the service answers.
@Suite struct SecureDFUFaultTests {
  static let firmware = SecureDFUTests.firmware

  /// nrfutil's flow as link events: SET PRN 8, the init packet as a command object, then the
  /// firmware in 4 KiB data objects of 244-byte packets, each checked (CALCULATE CHECKSUM) and
  /// executed; the last EXECUTE activates.
  static func flow() -> [PeripheralEvent] {
    func control(_ bytes: [UInt8]) -> PeripheralEvent {
      .nordicDFUControl(.secure, central: ScriptedNordicDFULink.central, bytes)
    }
    func object(_ type: UInt8, _ bytes: ArraySlice<UInt8>) -> [PeripheralEvent] {
      var events = [control(SecureDFUTests.Session.create(type, bytes.count))]
      for start in stride(from: bytes.startIndex, to: bytes.endIndex, by: 244) {
        events.append(
          .nordicDFUPacket(
            .secure, central: ScriptedNordicDFULink.central,
            Array(bytes[start..<min(start + 244, bytes.endIndex)])))
      }
      return events + [control([0x03]), control([0x04])]
    }
    var events = [control([0x02, 0x08, 0x00]), control([0x06, 0x01])]
    events += object(0x01, SecureDFUFixtures.signed[...])
    events.append(control([0x06, 0x02]))
    for start in stride(from: 0, to: firmware.count, by: 4096) {
      events += object(0x02, firmware[start..<min(start + 4096, firmware.count)])
    }
    return events
  }

  struct Run {
    var stop: DeviceService.Stop?
    var link: ScriptedNordicDFULink
    var fixture: DeviceFixture
    /// The answers to EXECUTE, in order.
    var executes: [[UInt8]] { link.notifications.filter { $0.starts(with: [0x60, 0x04]) } }
    /// The answers to CALCULATE CHECKSUM (and the receipts), in order.
    var checksums: [[UInt8]] { link.notifications.filter { $0.starts(with: [0x60, 0x03]) } }
  }

  /// The flow with `faults` set; a run whose script ends without a restart stops there.
  func run(_ faults: [String], recorder: ((DeviceActivity) -> Void)? = nil) throws -> Run {
    let state = try TemporaryDirectory(label: "secure-dfu-faults")
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    let link = ScriptedNordicDFULink(Self.flow())
    let service = DeviceService(host: try fixture.makeHost(), link: link, logger: Logger(label: "test"))
    service.nordicDFU[.secure] = SecureDFUDevice(trust: SecureDFUTests.trust)
    service.allowFaults(stateDirectory: state.url.path, configured: try faults.map(Fault.init(parsing:)))
    if let recorder {
      service.recordsDataWrites = true
      service.observe = recorder
    }
    defer { service.closeFaultControl() }
    return Run(stop: try? service.run(stopSignals: nil), link: link, fixture: fixture)
  }

  @Test func withoutFaultsTheLastExecuteActivates() throws {
    let run = try run([])
    #expect(run.stop == .restart)
    #expect(run.executes.count == 4 && run.executes.allSatisfy { $0 == [0x60, 0x04, 0x01] })
    #expect(try run.fixture.boot(verdict: .silent).runningOnTrial)
  }

  @Test func aRefusedExecuteAnswersTheResultAskedAndChangesNothing() throws {
    let run = try run(["refuse at=sdfu-execute status=operation-failed"])
    #expect(run.executes.first == [0x60, 0x04, 0x0A], "the init packet's EXECUTE, refused")
    #expect(run.stop == nil, "no init packet executed: no data object is taken, nothing activates")
    #expect(run.link.notifications.contains([0x60, 0x01, 0x08]))
    #expect(try run.fixture.boot().running == .a && run.fixture.runningSlotUntouched)
  }

  /// The device's checksum says what it received: a corrupted byte shows in the CRC32 it answers
  /// (nrfutil compares it and gives the object up); a client that executes anyway meets the
  /// SHA-256 check at the last EXECUTE.
  @Test func aCorruptedPacketShowsInTheChecksumAndFailsTheLastExecute() throws {
    let run = try run(["corrupt-chunk after=50%"])
    let wrong = run.checksums.filter {
      let offset = Int(UInt32($0[3]) | UInt32($0[4]) << 8 | UInt32($0[5]) << 16 | UInt32($0[6]) << 24)
      let crc = UInt32($0[7]) | UInt32($0[8]) << 8 | UInt32($0[9]) << 16 | UInt32($0[10]) << 24
      return offset > 143 && crc != CRC32.checksum(Self.firmware.prefix(offset))
    }
    #expect(!wrong.isEmpty, "a checksum from the corrupted byte on differs from the firmware's")
    #expect(run.executes.last == [0x60, 0x04, 0x0B, 0x0C], "VERIFICATION FAILED at the last EXECUTE")
    #expect(run.stop == nil && run.fixture.runningSlotUntouched)
  }

  /// A lost packet: the next checksum's offset falls 244 bytes short of what nrfutil sent, and the
  /// object's EXECUTE is not permitted (the object is not whole).
  @Test func aLostPacketShowsInTheOffsetAndTheObjectCannotBeExecuted() throws {
    let run = try run(["lose-chunk after=50%"])
    #expect(run.executes.contains([0x60, 0x04, 0x08]))
    #expect(run.stop == nil)
  }

  @Test func aDroppedLinkKeepsWhatArrivedForTheNextRun() throws {
    var lines: [String] = []
    let run = try run(["drop-link after=40%"]) { activity in
      if case .nordicDFU(.secure, let line) = activity { lines.append(line) }
    }
    #expect(run.link.drops == 1)
    #expect(
      lines.contains {
        $0.hasPrefix("the Secure DFU central left at ")
          && $0.hasSuffix("a central that comes back resumes there")
      }, "\(lines)")
  }

  @Test func theSessionReportTellsTheSecureDFUSession() throws {
    var recorder = SessionRecorder()
    var clock: UInt64 = 1_795_816_745_000_000
    _ = try run([]) { activity in
      clock += 1000
      recorder.record(activity, at: clock)
    }
    let text = try #require(recorder.takeEnded().first { $0.central == "Secure DFU central" }?.text)
    #expect(text.contains("SET PRN, a checksum every 8 packets"), "\(text)")
    #expect(text.contains("SELECT command object") && text.contains("CREATE data object of 4096 bytes"))
    #expect(text.contains("answered 0x60 0x04 0x01"))
    #expect(text.contains("ended: the device restarted"))
  }
}
