import OTABoot
import OTALink
import OTAReceiverHost
import OTASender
import OTASimulation
import OTASocketLink
import OTAStorage
import OTATrust
import OTAWire
import Testing

/// mcuboot's simulator, for an update over the air: count the storage operations of a whole update
/// (PREPARE to ACTIVATE), then cut the power at every one of them in turn, reboot and let the central
/// carry on. Every cut must end with the new image running and complete, and at every boot in between
/// the device must run a slot that holds a good image; the old running slot is never written.
@Suite struct PowerCutTests {
  static let newVersion = Version(major: 3, minor: 0, revision: 0)
  static let plainImage = DeviceFixture.image(size: 6000, seed: 77)
  static let windowCapacity: UInt32 = 1024

  /// How the update's bytes travel: plain chunks, compressed operations, or a delta against the
  /// running image (copies and patches read slot A while B is written).
  /// `encrypted`: an MCUboot image encrypted for the device's key, decrypted in place after the
  /// transfer in blocks of 1 KiB.
  enum Transfer { case plain, compressed, delta, encrypted }
  var transfer: Transfer = .plain
  /// After every reboot, the in-place decryption's record (if any) is overwritten with garbage.
  var damageDecryptionRecord = false

  /// The running image slot A holds (nil: the fixture's own random one).
  static let deltaBase = DeltaFixture.base(size: 5000, seed: 78)
  var runningImage: [UInt8]? { transfer == .delta ? Self.deltaBase : nil }

  var image: [UInt8] {
    switch transfer {
    case .plain: Self.plainImage
    case .compressed: DeltaFixture.compressible(size: 6000, seed: 79)
    case .delta: DeltaFixture.edited(Self.deltaBase, seed: 80)
    case .encrypted: Self.encryptedImage
    }
  }

  /// What slot B holds once the update is in: the image, or for an encrypted one its plaintext.
  var installed: [UInt8] { transfer == .encrypted ? Self.decryptedImage : image }

  static let deviceKey = try! ImageDecryptionKey.generate(.x25519)
  static let encryptedImage = try! MCUbootImageBuilder(
    version: newVersion, encryptFor: deviceKey.encryptionKey
  )
  .build(payload: DeviceFixture.image(size: 5000, seed: 81))
  static let decryptedImage: [UInt8] = {
    let layout = try! MCUbootImageLayout(parsing: encryptedImage)
    let key = try! deviceKey.unwrap(flags: layout.header.flags, tlvs: layout.unprotectedTLVs).get()
    let range = Int(layout.header.headerSize)..<Int(layout.header.headerSize) + Int(layout.header.imageSize)
    var bytes = encryptedImage
    bytes.replaceSubrange(range, with: key.crypt(Array(bytes[range]), atPayloadOffset: 0))
    return bytes
  }()

  /// Pushes the image to a fresh device whose trial gets `verdict`, with a power cut planned at `cut`
  /// (nil: none), checking every boot on the way. Returns the fixture, the run and the storage
  /// operations the device had done before the push.
  func push(cutAt cut: Int?, seed: UInt64?, verdict: DeviceFixture.TrialVerdict, expectSuccess: Bool? = nil)
    throws
    -> (
      fixture: DeviceFixture, run: (result: Simulation.Result, report: SenderReport?, device: ReceiverHost?),
      start: Int
    )
  {
    var fixture = DeviceFixture(
      slotCapacity: 8192, windowCapacity: Self.windowCapacity, runningImage: runningImage)
    if transfer == .encrypted {
      fixture.policy.decryptionKey = Self.deviceKey
      fixture.decryptionBlockSize = 1024
    }
    if transfer == .delta { try fixture.recordRunningImage() }
    let start = fixture.medium.operationCount
    if let cut { fixture.medium.inject(.powerCut, atOperation: cut) }
    let run = try fixture.push(
      image, version: Self.newVersion,
      conditions: LinkConditions(mtu: 185), faults: DeviceFaults(restartTime: .milliseconds(50)), seed: 1,
      bases: transfer == .delta ? [BaseImage(bytes: Self.deltaBase, name: "base")] : [], powerCutSeed: seed,
      limit: .seconds(600), verdict: verdict, expectSuccess: expectSuccess ?? (verdict == .passes)
    ) { host in
      try checkBootsAGoodImage(host, fixture, cut: cut)
      if damageDecryptionRecord, try fixture.medium.load(DecryptionRecord.fileName) != nil {
        try fixture.medium.replace(DecryptionRecord.fileName, with: [UInt8](repeating: 0x5A, count: 40))
      }
    }
    return (fixture, run, start)
  }

  /// The fewest power cuts a loop over every storage operation of one update can make: every window
  /// of the image reaches slot B through at least one slot write and one slot sync before its commit,
  /// so the update has at least two storage operations a window, and the loop cuts at each of them.
  var cutFloor: Int { 2 * ((image.count + Int(Self.windowCapacity) - 1) / Int(Self.windowCapacity)) }

  /// What one run did: the storage operations it took and the power cuts that happened.
  struct Work {
    var operations: Int
    var powerCuts: Int
  }

  /// One update with a cut planned at `cut` (nil: none).
  func update(cutAt cut: Int?, seed: UInt64?) throws -> Work {
    let (fixture, run, start) = try push(cutAt: cut, seed: seed, verdict: .passes)
    let result = run.result
    guard run.report != nil else { return Work(operations: 0, powerCuts: result.powerCuts) }
    if cut != nil {
      #expect(result.powerCuts == 1, "cut at \(cut!): the planned cut happened")
    }
    let device = try #require(run.device)
    #expect(device.running == .b, "cut at \(String(describing: cut))")
    #expect(device.boot[.b].version == Self.newVersion)
    #expect(
      device.boot.confirmed == .b && !device.runningOnTrial, "cut at \(String(describing: cut)): confirmed")
    #expect(device.boot.outcome.result == .succeeded && device.boot.outcome.to == Self.newVersion)
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == installed)
    #expect(fixture.runningSlotUntouched, "cut at \(String(describing: cut)): slot A was written")
    switch transfer {
    case .plain: #expect(run.report?.transferMode == .plain)
    case .compressed: #expect(run.report?.transferMode == .compressed)
    case .delta: #expect(run.report?.transferMode == .delta(base: 0))
    case .encrypted: break  // plain or compressed, as the sender finds best (the header's fill compresses)
    }
    return Work(operations: fixture.medium.operationCount - start, powerCuts: result.powerCuts)
  }

  /// An update whose trial fails its health check, with a cut planned at `cut`: it must end rolled
  /// back to the untouched slot A, slot B marked bad, whatever the cut hit.
  func rollback(cutAt cut: Int?, seed: UInt64?) throws -> Work {
    let (fixture, run, start) = try push(cutAt: cut, seed: seed, verdict: .fails)
    let at = "cut at \(String(describing: cut))"
    guard case .failed(.rolledBack(let running, let reason), _) = run.result.outcome else {
      Issue.record("\(at): \(String(describing: run.result.outcome))")
      return Work(operations: 0, powerCuts: run.result.powerCuts)
    }
    #expect(running == DeviceFixture.runningVersion && reason == .healthCheckFailed, "\(at)")
    let device = try #require(run.device)
    #expect(device.running == .a && device.boot.confirmed == .a && device.boot[.b].status == .bad, "\(at)")
    #expect(device.info().lastOutcome.result == .rolledBack, "\(at)")
    #expect(fixture.runningSlotUntouched, "\(at): slot A was written")
    #expect(fixture.bootloader.appliedPlans.last == BootPlan(primary: .a), "\(at)")
    return Work(operations: fixture.medium.operationCount - start, powerCuts: run.result.powerCuts)
  }

  /// Whatever the boot state says runs must hold a complete, good image, and so must the confirmed slot.
  /// The journal, written in place, never claims a byte that is not durable in the slot.
  func checkBootsAGoodImage(_ host: ReceiverHost, _ fixture: DeviceFixture, cut: Int?) throws {
    if let transfer = host.engine.transfer,
      self.transfer != .encrypted || transfer.committedOffset < transfer.size
    {
      // (Once an encrypted image is whole, its decryption changes what the slot holds.)
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
        Array(bytes.prefix(image.count)) == installed, "cut at \(String(describing: cut)): B runs torn")
    }
  }

  @Test func aCutAtEveryStorageOperationStillEndsWithTheNewImage() throws {
    // [SEC-ATK-25]
    let total = try update(cutAt: nil, seed: nil).operations
    #expect(total > 40, "the update touches storage \(total) times")
    print("power cuts: an update up to its confirmation takes \(total) storage operations; a cut at each")
    var cuts = 0
    for cut in 0..<total {
      cuts += try update(cutAt: cut, seed: nil).powerCuts
    }
    #expect(cuts >= cutFloor, "\(cuts) cuts, fewer than two for each of the image's windows")
  }

  /// Rollback under the same loop: the trial fails its health check; a cut anywhere (PREPARE to
  /// ACTIVATE, the boot stage, mark-bad, the boot back) still ends on slot A with B marked bad.
  @Test func aCutAtEveryStorageOperationOfAFailedTrialStillRollsBack() throws {
    // [SEC-ATK-25]
    let total = try rollback(cutAt: nil, seed: nil).operations
    #expect(total > 40, "the update touches storage \(total) times")
    print("power cuts: a failed trial takes \(total) storage operations; a cut at each of them")
    var cuts = 0
    for cut in 0..<total {
      cuts += try rollback(cutAt: cut, seed: UInt64(cut) &+ 7).powerCuts
    }
    // The failed trial wrote every window before it failed: the same floor as an update's.
    #expect(cuts >= cutFloor, "\(cuts) cuts, fewer than two for each of the image's windows")
  }

  /// The loop again for a delta (copies and patches read the running slot while the other is
  /// written) and for a compressed transfer: the bytes an operation produces are stored exactly as
  /// a chunk's, so every cut still ends with the exact new image, slot A never written.
  @Test(arguments: [Transfer.delta, .compressed, .encrypted])
  func aCutAtEveryStorageOperationOfAnOperationsTransferStillEndsWithTheNewImage(_ transfer: Transfer) throws
  {
    // [SEC-ENC-4]
    let tests = PowerCutTests(transfer: transfer)
    let total = try tests.update(cutAt: nil, seed: nil).operations
    #expect(total > 40, "the update touches storage \(total) times")
    print("power cuts: a \(transfer) update takes \(total) storage operations; a cut at each")
    var cuts = 0
    for cut in 0..<total {
      cuts += try tests.update(cutAt: cut, seed: cut % 2 == 0 ? nil : UInt64(cut) &+ 3000).powerCuts
    }
    // The operations only carry the bytes: slot B still gets every window of the new image.
    #expect(cuts >= tests.cutFloor, "\(cuts) cuts, fewer than two for each of the image's windows")
  }

  /// The encrypted loop again, the decryption's record damaged after every restart: the device can
  /// no longer tell which part of the payload it decrypted, so the check of the image as sent fails
  /// (the push exits as validation failed) and the transfer is dropped; slot A is never written, the
  /// device runs what it ran, and the next push installs the image.
  @Test func aDamagedDecryptionRecordCostsAPushNeverAGoodImage() throws {
    // [SEC-ENC-4]
    let tests = PowerCutTests(transfer: .encrypted, damageDecryptionRecord: true)
    let total = try tests.update(cutAt: nil, seed: nil).operations
    var failedPushes = 0
    for cut in stride(from: 0, to: total, by: 2) {
      let (fixture, run, _) = try tests.push(cutAt: cut, seed: nil, verdict: .passes, expectSuccess: false)
      if case .failed(let failure, _) = run.result.outcome {
        failedPushes += 1
        #expect(
          failure == .validationFailed(.crcMismatch) || failure == .validationFailed(.validationFailed),
          "cut at \(cut): \(failure)")
        #expect(run.device?.running == .a && run.device?.boot.confirmed == .a, "cut at \(cut)")
        #expect(fixture.runningSlotUntouched, "cut at \(cut)")
        let again = try fixture.push(
          tests.image, version: Self.newVersion, conditions: LinkConditions(mtu: 185), seed: 2)
        #expect(
          again.device?.running == .b && again.device?.boot.confirmed == .b, "cut at \(cut): the next push")
      }
      #expect(
        Array(fixture.medium.slotBytes(.b).prefix(tests.image.count)) == tests.installed,
        "cut at \(cut): slot B does not hold the plaintext")
    }
    #expect(failedPushes > 0, "some cut fell inside the decryption")
  }

  /// The same, where a cut keeps a random part of what was not yet synced, torn at sector bounds.
  @Test func aCutThatKeepsTornUnsyncedWritesStillEndsWithTheNewImage() throws {
    // [P-OP-10]
    let total = try update(cutAt: nil, seed: nil).operations
    var cuts = 0
    for cut in 0..<total {
      cuts += try update(cutAt: cut, seed: UInt64(cut) &+ 1000).powerCuts
    }
    #expect(cuts >= cutFloor, "\(cuts) cuts, fewer than two for each of the image's windows")
  }
}
