import OTADevice
import OTAEngine
import OTALink
import OTASimulation
import OTAStorage
import OTAWire
import Testing

/// mcuboot's simulator, for an update over the air: count the storage operations of a whole update
/// (PREPARE to ACTIVATE), then cut the power at every one of them in turn, reboot and let the central
/// carry on. Every cut must end with the new image running and complete, and at every boot in between
/// the device must run a slot that holds a good image; the old running slot is never written.
@Suite struct PowerCutTests {
  static let newVersion = Version(major: 3, minor: 0, revision: 0)
  static let image = DeviceFixture.image(size: 6000, seed: 77)

  /// One update with a cut planned at `cut` (nil: none). Returns the storage operations it took.
  func update(cutAt cut: Int?, seed: UInt64?) throws -> Int {
    let fixture = DeviceFixture(slotCapacity: 8192, windowCapacity: 1024)
    let start = fixture.medium.operationCount
    if let cut { fixture.medium.inject(.powerCut, atOperation: cut) }
    let run = try fixture.push(
      Self.image, version: Self.newVersion,
      conditions: LinkConditions(mtu: 185), faults: DeviceFaults(restartTime: .milliseconds(50)), seed: 1,
      powerCutSeed: seed, limit: .seconds(600)
    ) { host in try checkBootsAGoodImage(host, fixture, cut: cut) }
    guard run.report != nil else { return 0 }
    let result = run.result
    if cut != nil {
      #expect(result.powerCuts == 1, "cut at \(cut!): the planned cut happened")
    }
    let device = try #require(run.device)
    #expect(device.boot.running == .b, "cut at \(String(describing: cut))")
    #expect(device.boot.version(of: .b) == Self.newVersion)
    #expect(Array(fixture.medium.slotBytes(.b).prefix(Self.image.count)) == Self.image)
    #expect(fixture.runningSlotUntouched, "cut at \(String(describing: cut)): slot A was written")
    return fixture.medium.operationCount - start
  }

  /// Whatever the boot record says runs must hold a complete, good image.
  func checkBootsAGoodImage(_ host: ReceiverHost, _ fixture: DeviceFixture, cut: Int?) throws {
    let running = host.boot.running
    let bytes = fixture.medium.slotBytes(running)
    if running == .a {
      #expect(host.boot.version(of: .a) == DeviceFixture.runningVersion)
      #expect(fixture.runningSlotUntouched, "cut at \(String(describing: cut))")
    } else {
      #expect(host.boot.version(of: .b) == Self.newVersion, "cut at \(String(describing: cut))")
      #expect(
        Array(bytes.prefix(Self.image.count)) == Self.image, "cut at \(String(describing: cut)): B runs torn")
    }
  }

  @Test func aCutAtEveryStorageOperationStillEndsWithTheNewImage() throws {
    let total = try update(cutAt: nil, seed: nil)
    #expect(total > 40, "the update touches storage \(total) times")
    for cut in 0..<total {
      _ = try update(cutAt: cut, seed: nil)
    }
  }

  /// The same, where a cut keeps a random part of what was not yet synced, torn at sector bounds.
  @Test func aCutThatKeepsTornUnsyncedWritesStillEndsWithTheNewImage() throws {
    let total = try update(cutAt: nil, seed: nil)
    for cut in 0..<total {
      _ = try update(cutAt: cut, seed: UInt64(cut) &+ 1000)
    }
  }
}
