import OTASender
import OTASimulation
import OTASocketLink
import OTAWire
import Testing

/// Missing-range reports between the real engines over the simulated link: the new central with a
/// new device uses them, and either side from before them still completes a push on the old path.
@Suite struct MissingRangeCompatibilityTests {
  static let version = Version(major: 2, minor: 1, revision: 0)
  static let image = DeviceFixture.image(size: 200_000, seed: 18)

  static func push(
    deviceFeatures: Features, centralOptsIn: Bool, loss: Double, reordering: Double = 0, seed: UInt64 = 7
  ) throws -> (result: Simulation.Result, report: SenderReport?) {
    var fixture = DeviceFixture(slotCapacity: 256 * 1024, windowCapacity: 64 * 1024)
    fixture.features = deviceFeatures
    let conditions = LinkConditions(mtu: 247, loss: loss, reordering: reordering, seed: seed)
    let sender = SenderConfiguration(
      version: version, maxConnectAttempts: 20, missingRangeReports: centralOptsIn)
    let run = try fixture.push(image, version: version, conditions: conditions, seed: seed, sender: sender)
    if run.report != nil {
      #expect(Array(fixture.medium.slotBytes(.b).prefix(image.count)) == image)
    }
    return (run.result, run.report)
  }

  @Test func newCentralAndNewDeviceResendOnlyWhatWasLostAndNeverFailAWindow() throws {
    let run = try Self.push(deviceFeatures: .all, centralOptsIn: true, loss: 0.03)
    let report = try #require(run.report)
    #expect(run.result.packetsLost > 0)
    #expect(report.missingReports > 0)
    #expect(report.windowFailures == 0, "loss is reported range by range, no window fails")
    // Only lost chunks go again: resent chunks stay close to the chunks the link lost.
    #expect(report.chunksResent >= run.result.packetsLost / 2)
    #expect(report.chunksResent <= run.result.packetsLost * 2 + 4)
  }

  @Test func reorderingAloneCostsNoResend() throws {
    let run = try Self.push(deviceFeatures: .all, centralOptsIn: true, loss: 0, reordering: 0.1)
    let report = try #require(run.report)
    #expect(run.result.packetsReordered > 0)
    #expect(report.chunksResent == 0 && report.missingReports == 0 && report.windowFailures == 0)
  }

  @Test func anOlderCentralNeverOptsInAndStillCompletes() throws {
    let run = try Self.push(deviceFeatures: .all, centralOptsIn: false, loss: 0.03)
    let report = try #require(run.report)
    #expect(report.missingReports == 0)
    #expect(report.windowFailures > 0, "the base protocol's path: windows fail with missing data")
  }

  @Test func theNewCentralTakesTheOldPathWithAnOlderDevice() throws {
    // [P-CEN-7]
    let run = try Self.push(deviceFeatures: [], centralOptsIn: true, loss: 0.03)
    let report = try #require(run.report)
    #expect(report.deviceBefore?.features == [])
    #expect(report.missingReports == 0)
    #expect(report.windowFailures > 0)
  }
}
