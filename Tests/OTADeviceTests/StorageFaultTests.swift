import OTAChecksum
import OTAEngine
import OTALink
import OTASimulation
import OTASocketLink
import OTAStorage
import OTAStorageTesting
import OTAWire
import Testing

/// EIO, ENOSPC and short writes in the middle of a push: the device answers with a status, keeps
/// its committed offset honest, and the central's retries carry the update through.
@Suite struct StorageFaultTests {

  static let newVersion = Version(major: 4, minor: 0, revision: 0)
  static let image = DeviceFixture.image(size: 20_000, seed: 8)

  struct Case: CustomStringConvertible, Sendable {
    var fault: MemoryMedium.Fault
    var kind: MemoryMedium.Operation
    var nth: Int
    var description: String { "\(fault) at \(kind) #\(nth)" }
  }

  static let renamesPerPush = 7
  static let directorySyncsPerPush = 9

  static let cases: [Case] = [MemoryMedium.Fault.ioError, .noSpace, .shortWrite].flatMap { fault in
    [
      MemoryMedium.Operation.slotWrite, .slotRead, .slotSync, .recordWrite, .recordSync, .recordRename,
      .directorySync,
    ]
    .flatMap { kind in
      // The journal is written in place per window (recordWrite, recordSync); a push renames and
      // syncs the directory only at PREPARE (the journal's removal and creation), at ACTIVATE (the
      // boot state's two copies), and at the start after it (the trial's boot, its confirmation).
      // Every one of those (`aStorageErrorWhileConfirmingTheTrialIsRetriedAtTheNextStart` keeps the counts true).
      let nths =
        switch kind {
        case .recordRename: Array(0..<renamesPerPush)
        case .directorySync: Array(0..<directorySyncsPerPush)
        default: [0, 2, 4]
        }
      return nths.map { Case(fault: fault, kind: kind, nth: $0) }
    }
  }

  @Test(arguments: cases)
  func aFaultedOperationIsAnsweredAndThePushRecovers(_ testCase: Case) throws {
    // [SEC-LIMIT-5]
    let fixture = DeviceFixture(slotCapacity: 32 * 1024, windowCapacity: 4096)
    // Booting only loads records, which none of these kinds match: the fault hits the transfer.
    fixture.medium.inject(testCase.fault, atOperation: testCase.nth, of: [testCase.kind])
    let run = try fixture.push(
      Self.image, version: Self.newVersion, conditions: LinkConditions(mtu: 185), seed: 8,
      limit: .seconds(600))
    guard run.report != nil else {
      Issue.record("\(testCase)")
      return
    }
    #expect(fixture.medium.pendingFaultCount == 0, "\(testCase): the fault fired")
    #expect(Array(fixture.medium.slotBytes(.b).prefix(Self.image.count)) == Self.image)
    #expect(fixture.runningSlotUntouched)
    #expect(try #require(run.device).running == .b)
  }

  /// otad exits when it cannot record the trial's boot or its confirmation, and its service manager
  /// starts it again (`Restart=on-failure`): that next start confirms the new firmware.
  @Test func aStorageErrorWhileConfirmingTheTrialIsRetriedAtTheNextStart() throws {
    let fixture = DeviceFixture(slotCapacity: 32 * 1024, windowCapacity: 4096)
    let clean = try fixture.push(
      Self.image, version: Self.newVersion, conditions: LinkConditions(mtu: 185), seed: 8)
    #expect(clean.result.failedStarts == 0)
    // aStorageErrorWhileConfirmingTheTrialIsRetriedAtTheNextStart: the cases above fault each of these.
    #expect(fixture.medium.operationCount(of: .recordRename) == Self.renamesPerPush)
    #expect(fixture.medium.operationCount(of: .directorySync) == Self.directorySyncsPerPush)

    let faulted = DeviceFixture(slotCapacity: 32 * 1024, windowCapacity: 4096)
    // The last two renames are the confirmation's two copies of the boot state: fail the first.
    faulted.medium.inject(.ioError, atOperation: Self.renamesPerPush - 2, of: [.recordRename])
    let run = try faulted.push(
      Self.image, version: Self.newVersion, conditions: LinkConditions(mtu: 185), seed: 8)
    #expect(run.result.failedStarts == 1)
    #expect(faulted.medium.pendingFaultCount == 0)
    let device = try #require(run.device)
    #expect(device.running == .b)
    #expect(device.boot.confirmed == .b)
    #expect(faulted.runningSlotUntouched)
  }

  @Test func aStorageErrorAtCommitIsAnsweredWithStatusAndResent() throws {
    // [P-WIN-4] [P-STOR-1]
    let fixture = DeviceFixture(slotCapacity: 32 * 1024, windowCapacity: 4096)
    var host = try fixture.makeHost()
    _ = try host.handle(.connected(mtu: 185))
    let prepare = Request.prepare(size: 4096, crc32: 0, version: Self.newVersion)
    _ = try host.handle(.control(prepare.encoded, now: .zero))
    for offset in stride(from: 0, to: 2048, by: 128) {
      let chunk = DataChunk(offset: UInt32(offset), payload: ArraySlice(Self.image[offset..<offset + 128]))
      _ = try host.handle(.data(chunk.encoded, now: .zero))
    }
    fixture.medium.inject(.ioError, atOperation: 0, of: [.slotSync])
    let window = Request.window(offset: 0, length: 2048, crc32: CRC32.checksum(Self.image[0..<2048]))
    let outputs = try host.handle(.control(window.encoded, now: .zero))
    #expect(outputs == [.notify(Response(.window, .storageError, .offset(0)).encoded)])
    #expect(host.engine.transferStatus.committedOffset == 0)
  }
}
