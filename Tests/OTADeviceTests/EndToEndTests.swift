import OTALink
import OTASender
import OTASimulation
import OTASocketLink
import OTAStorage
import OTAWire
import Testing

/// Sender and receiver engines over a lossy, reordering, duplicating, bit-flipping link with random
/// disconnects, process restarts and power cuts, at the MTUs that matter.
@Suite struct EndToEndTests {
  static let capacity = 96 * 1024
  static let newVersion = Version(major: 2, minor: 1, revision: 0, build: 7)

  struct Case: CustomStringConvertible, Sendable {
    var mtu: Int
    var size: Int
    var description: String { "MTU \(mtu), \(size) bytes" }
  }

  static let cases: [Case] = [23, 185, 247, 517].flatMap { mtu in
    [1, 4099, 50_001, EndToEndTests.capacity].map { Case(mtu: mtu, size: $0) }
  }

  @Test(arguments: cases)
  func hostileLinkEndsWithTheExactImageRunning(_ testCase: Case) throws {
    for seed in UInt64(1)...3 {
      let fixture = DeviceFixture(slotCapacity: Self.capacity)
      let image = DeviceFixture.image(size: testCase.size, seed: seed &* 31 &+ UInt64(testCase.size))
      var conditions = LinkConditions.hostile(mtu: testCase.mtu)
      conditions.disconnects = 0.004
      let run = try fixture.push(
        image, version: Self.newVersion, conditions: conditions, faults: .hostile, seed: seed,
        powerCutSeed: seed)
      guard let report = run.report else { continue }
      #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image, "\(testCase)")
      #expect(fixture.runningSlotUntouched, "\(testCase)")
      let device = try #require(run.device)
      #expect(device.running == .b)
      #expect(device.info().runningVersion == Self.newVersion)
      #expect(report.deviceAfter?.runningVersion == Self.newVersion)
      #expect(report.deviceBefore?.runningVersion == DeviceFixture.runningVersion)
    }
  }

  /// Every kind of fault happens on the hostile link. Summed over three seeds: whether one run's
  /// three restarts include a power cut (a coin each) is the seed's luck, and a change of the
  /// device's timing changes which run is lucky.
  @Test func theHostileLinkReallyIsHostile() throws {
    var lost = 0
    var duplicated = 0
    var reordered = 0
    var flipped = 0
    var disconnects = 0
    var restarts = 0
    var powerCuts = 0
    for seed in UInt64(5)...7 {
      let fixture = DeviceFixture(slotCapacity: Self.capacity)
      let image = DeviceFixture.image(size: Self.capacity, seed: seed)
      var conditions = LinkConditions.hostile(mtu: 185)
      conditions.disconnects = 0.02
      let faults = DeviceFaults(restartsOnDisconnect: 1, powerCutsOnRestart: 0.5)
      let run = try fixture.push(
        image, version: Self.newVersion, conditions: conditions, faults: faults, seed: seed,
        powerCutSeed: seed)
      let report = try #require(run.report, "seed \(seed)")
      #expect(report.resumedFrom.contains { $0 > 0 }, "some reconnect resumed past zero (seed \(seed))")
      #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image, "seed \(seed)")
      let result = run.result
      lost += result.packetsLost
      duplicated += result.packetsDuplicated
      reordered += result.packetsReordered
      flipped += result.bitsFlipped
      disconnects += result.disconnects
      restarts += result.restarts
      powerCuts += result.powerCuts
    }
    #expect(lost > 0 && duplicated > 0 && reordered > 0 && flipped > 0)
    #expect(disconnects > 3 && restarts > 3 && powerCuts > 0)
  }

  @Test func reorderingAloneCostsNoResend() throws {
    // [P-WIN-10]
    let fixture = DeviceFixture(slotCapacity: Self.capacity)
    let image = DeviceFixture.image(size: 80_000, seed: 9)
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 247, reordering: 0.3), seed: 9)
    guard let report = run.report else { return }
    #expect(run.result.packetsReordered > 50)
    #expect(report.bytesSent == UInt64(image.count), "every byte crossed exactly once")
    #expect(report.windowFailures == 0)
    #expect(
      !run.result.timeline.contains { $0.what == "central: checkingStatus" && $0.at > .milliseconds(100) },
      "no resync")
  }

  /// The transfer's own span, which otactl's `transferGoodput` is over: from the PREPARE sent to
  /// VALIDATE's answer, inside the push, after the connection and STATUS, before the activation.
  @Test func theReportTimesTheTransferFromPrepareToValidatesAnswer() throws {
    let fixture = DeviceFixture(slotCapacity: Self.capacity)
    let image = DeviceFixture.image(size: 40_000, seed: 5)
    let run = try fixture.push(image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 5)
    let report = try #require(run.report)
    let started = try #require(report.transferStartedAt)
    let validated = try #require(report.validatedAt)
    let timeline = run.result.timeline
    let preparing = try #require(timeline.first { $0.what == "central: preparing" }?.at)
    let activating = try #require(timeline.first { $0.what == "central: activating" }?.at)
    #expect(started == preparing)
    #expect(started < validated && validated <= activating)
    #expect(validated - started < run.result.elapsed)
  }

  @Test func flippedBitsAreCaughtByTheWindowCRCAndResent() throws {
    let fixture = DeviceFixture(slotCapacity: Self.capacity)
    let image = DeviceFixture.image(size: 60_000, seed: 12)
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 23, bitFlips: 0.01), seed: 12)
    guard let report = run.report else { return }
    #expect(run.result.bitsFlipped > 20)
    #expect(run.result.receiver.windowsFailedCRC > 0)
    #expect(report.windowFailures >= run.result.receiver.windowsFailedCRC)
    #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
  }

  @Test func anImageOneByteOverCapacityIsRefusedBeforeAnyByteMoves() throws {
    let fixture = DeviceFixture(slotCapacity: Self.capacity)
    let image = DeviceFixture.image(size: Self.capacity + 1, seed: 3)
    var simulation = try Simulation(
      image: image, sender: SenderConfiguration(version: Self.newVersion),
      conditions: LinkConditions(mtu: 247), seed: 3
    ) { _ in try fixture.makeHost() }
    let operationsBefore = fixture.medium.operationCount
    let result = try simulation.run()
    guard case .failed(.tooLarge(let size, let capacity), let report) = result.outcome else {
      Issue.record("\(String(describing: result.outcome))")
      return
    }
    #expect(size == Self.capacity + 1 && capacity == UInt32(Self.capacity))
    #expect(report.bytesSent == 0)
    #expect(fixture.medium.operationCount == operationsBefore, "no storage operation at all")
    #expect(fixture.medium.slotBytes(.b).allSatisfy { $0 == 0 })
  }

  @Test func validateOnlyLeavesTheDeviceRunningTheOldImage() throws {
    // [P-REQ-4]
    let fixture = DeviceFixture(slotCapacity: Self.capacity)
    let image = DeviceFixture.image(size: 10_000, seed: 4)
    let run = try fixture.push(
      image, version: Self.newVersion, conditions: LinkConditions(mtu: 247), seed: 4,
      sender: SenderConfiguration(version: Self.newVersion, activate: false))
    let device = try #require(run.device)
    #expect(device.info().state == .validated)
    #expect(device.running == .a)
  }

  /// A validated transfer is resumed (nothing sent again) only by a push of the same bytes with the
  /// same version; the same bytes as another version are another update, sent whole.
  @Test func theSameBytesAsAnotherVersionAreNotResumed() throws {
    // [P-PHASE-3]
    let fixture = DeviceFixture(slotCapacity: Self.capacity)
    let image = DeviceFixture.image(size: 10_000, seed: 4)
    let other = Version(major: Self.newVersion.major, minor: Self.newVersion.minor + 1, revision: 0)
    func push(_ version: Version, seed: UInt64) throws -> SenderReport? {
      try fixture.push(
        image, version: version, conditions: LinkConditions(mtu: 247), seed: seed,
        sender: SenderConfiguration(version: version, activate: false)
      ).report
    }
    _ = try push(Self.newVersion, seed: 4)
    let again = try #require(try push(Self.newVersion, seed: 5))
    #expect(again.bytesSent == 0 && again.resumedFrom == [UInt32(image.count)])
    let another = try #require(try push(other, seed: 6))
    #expect(another.bytesSent == UInt64(image.count) && another.resumedFrom.isEmpty)
    let device = try #require(try fixture.boot())
    #expect(device.info().transferVersion == other)
  }
}
