import OTABoot
import OTADevice
import OTALink
import OTASender
import OTASimulation
import OTASocketLink
import OTAStorage
import OTAWire
import Testing

/// mcuboot's simulator, for an update over the air: count the storage operations of a whole update
/// (PREPARE to ACTIVATE), then cut the power at every one of them in turn, reboot and let the central
/// carry on. Every cut must end with the new image running and complete, and at every boot in between
/// the device must run a slot that holds a good image; the old running slot is never written.
@Suite struct PowerCutTests {
  static let newVersion = Version(major: 3, minor: 0, revision: 0)
  static let plainImage = DeviceFixture.image(size: 6000, seed: 77)

  /// How the update's bytes travel: plain chunks, compressed operations, or a delta against the
  /// running image (copies and patches read slot A while B is written).
  enum Transfer { case plain, compressed, delta }
  var transfer: Transfer = .plain

  /// The running image slot A holds (nil: the fixture's own random one).
  static let deltaBase = DeltaFixture.base(size: 5000, seed: 78)
  var runningImage: [UInt8]? { transfer == .delta ? Self.deltaBase : nil }

  var image: [UInt8] {
    switch transfer {
    case .plain: Self.plainImage
    case .compressed: DeltaFixture.compressible(size: 6000, seed: 79)
    case .delta: DeltaFixture.edited(Self.deltaBase, seed: 80)
    }
  }

  /// Pushes the image to a fresh device whose trial gets `verdict`, with a power cut planned at `cut`
  /// (nil: none), checking every boot on the way. Returns the fixture, the run and the storage
  /// operations the device had done before the push.
  func push(cutAt cut: Int?, seed: UInt64?, verdict: DeviceFixture.TrialVerdict) throws
    -> (
      fixture: DeviceFixture, run: (result: Simulation.Result, report: SenderReport?, device: ReceiverHost?),
      start: Int
    )
  {
    let fixture = DeviceFixture(slotCapacity: 8192, windowCapacity: 1024, runningImage: runningImage)
    if transfer == .delta { try fixture.recordRunningImage() }
    let start = fixture.medium.operationCount
    if let cut { fixture.medium.inject(.powerCut, atOperation: cut) }
    let run = try fixture.push(
      image, version: Self.newVersion,
      conditions: LinkConditions(mtu: 185), faults: DeviceFaults(restartTime: .milliseconds(50)), seed: 1,
      bases: transfer == .delta ? [BaseImage(bytes: Self.deltaBase, name: "base")] : [], powerCutSeed: seed,
      limit: .seconds(600), verdict: verdict, expectSuccess: verdict == .passes
    ) { host in try checkBootsAGoodImage(host, fixture, cut: cut) }
    return (fixture, run, start)
  }

  /// One update with a cut planned at `cut` (nil: none). Returns the storage operations it took.
  func update(cutAt cut: Int?, seed: UInt64?) throws -> Int {
    let (fixture, run, start) = try push(cutAt: cut, seed: seed, verdict: .passes)
    guard run.report != nil else { return 0 }
    let result = run.result
    if cut != nil {
      #expect(result.powerCuts == 1, "cut at \(cut!): the planned cut happened")
    }
    let device = try #require(run.device)
    #expect(device.running == .b, "cut at \(String(describing: cut))")
    #expect(device.boot[.b].version == Self.newVersion)
    #expect(
      device.boot.confirmed == .b && !device.runningOnTrial, "cut at \(String(describing: cut)): confirmed")
    #expect(device.boot.outcome.result == .succeeded && device.boot.outcome.to == Self.newVersion)
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
    #expect(fixture.runningSlotUntouched, "cut at \(String(describing: cut)): slot A was written")
    switch transfer {
    case .plain: #expect(run.report?.transferMode == .plain)
    case .compressed: #expect(run.report?.transferMode == .compressed)
    case .delta: #expect(run.report?.transferMode == .delta(base: 0))
    }
    return fixture.medium.operationCount - start
  }

  /// An update whose trial fails its health check, with a cut planned at `cut`: it must end rolled
  /// back to the untouched slot A, slot B marked bad, whatever the cut hit. Returns the operations.
  func rollback(cutAt cut: Int?, seed: UInt64?) throws -> Int {
    let (fixture, run, start) = try push(cutAt: cut, seed: seed, verdict: .fails)
    let at = "cut at \(String(describing: cut))"
    guard case .failed(.rolledBack(let running, let reason), _) = run.result.outcome else {
      Issue.record("\(at): \(String(describing: run.result.outcome))")
      return 0
    }
    #expect(running == DeviceFixture.runningVersion && reason == .healthCheckFailed, "\(at)")
    let device = try #require(run.device)
    #expect(device.running == .a && device.boot.confirmed == .a && device.boot[.b].status == .bad, "\(at)")
    #expect(device.info().lastOutcome.result == .rolledBack, "\(at)")
    #expect(fixture.runningSlotUntouched, "\(at): slot A was written")
    #expect(fixture.bootloader.appliedPlans.last == BootPlan(primary: .a), "\(at)")
    return fixture.medium.operationCount - start
  }

  /// Whatever the boot state says runs must hold a complete, good image, and so must the confirmed slot.
  /// The journal, written in place, never claims a byte that is not durable in the slot.
  func checkBootsAGoodImage(_ host: ReceiverHost, _ fixture: DeviceFixture, cut: Int?) throws {
    if let transfer = host.engine.transfer {
      let committed = Int(transfer.committedOffset)
      #expect(
        transfer.slot == .b && transfer.size == UInt32(image.count), "cut at \(String(describing: cut))")
      #expect(
        fixture.medium.durableSlotBytes(.b).prefix(committed) == image.prefix(committed),
        "cut at \(String(describing: cut)): the journal claims \(committed) bytes the slot does not hold")
    }
    let running = host.running
    try checkHoldsAGoodImage(running, host, fixture, cut: cut)
    if host.boot.confirmed != running {
      try checkHoldsAGoodImage(host.boot.confirmed, host, fixture, cut: cut)
    }
  }

  func checkHoldsAGoodImage(_ slot: SlotID, _ host: ReceiverHost, _ fixture: DeviceFixture, cut: Int?) throws
  {
    let running = slot
    let bytes = fixture.medium.slotBytes(running)
    if running == .a {
      #expect(host.boot[.a].version == DeviceFixture.runningVersion)
      #expect(fixture.runningSlotUntouched, "cut at \(String(describing: cut))")
    } else {
      #expect(host.boot[.b].version == Self.newVersion, "cut at \(String(describing: cut))")
      #expect(
        Array(bytes.prefix(image.count)) == image, "cut at \(String(describing: cut)): B runs torn")
    }
  }

  @Test func aCutAtEveryStorageOperationStillEndsWithTheNewImage() throws {
    let total = try update(cutAt: nil, seed: nil)
    #expect(total > 40, "the update touches storage \(total) times")
    print("power cuts: an update up to its confirmation takes \(total) storage operations; a cut at each")
    for cut in 0..<total {
      _ = try update(cutAt: cut, seed: nil)
    }
  }

  /// Rollback under the same loop: the trial fails its health check; a cut anywhere (PREPARE to
  /// ACTIVATE, the boot stage, mark-bad, the boot back) still ends on slot A with B marked bad.
  @Test func aCutAtEveryStorageOperationOfAFailedTrialStillRollsBack() throws {
    let total = try rollback(cutAt: nil, seed: nil)
    #expect(total > 40, "the update touches storage \(total) times")
    print("power cuts: a failed trial takes \(total) storage operations; a cut at each of them")
    for cut in 0..<total {
      _ = try rollback(cutAt: cut, seed: UInt64(cut) &+ 7)
    }
  }

  /// The loop again for a delta (copies and patches read the running slot while the other is
  /// written) and for a compressed transfer: the bytes an operation produces are stored exactly as
  /// a chunk's, so every cut still ends with the exact new image, slot A never written.
  @Test(arguments: [Transfer.delta, .compressed])
  func aCutAtEveryStorageOperationOfAnOperationsTransferStillEndsWithTheNewImage(_ transfer: Transfer) throws
  {
    let tests = PowerCutTests(transfer: transfer)
    let total = try tests.update(cutAt: nil, seed: nil)
    #expect(total > 40, "the update touches storage \(total) times")
    print("power cuts: a \(transfer) update takes \(total) storage operations; a cut at each")
    for cut in 0..<total {
      _ = try tests.update(cutAt: cut, seed: cut % 2 == 0 ? nil : UInt64(cut) &+ 3000)
    }
  }

  /// The same, where a cut keeps a random part of what was not yet synced, torn at sector bounds.
  @Test func aCutThatKeepsTornUnsyncedWritesStillEndsWithTheNewImage() throws {
    // [P-OP-10]
    let total = try update(cutAt: nil, seed: nil)
    for cut in 0..<total {
      _ = try update(cutAt: cut, seed: UInt64(cut) &+ 1000)
    }
  }
}
