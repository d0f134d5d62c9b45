import OTADevice
import OTAEngine
import OTALink
import OTASimulation
import OTAStorage
import OTAWire
import Testing

/// A device on in-memory storage: slot A holds the running image, nothing else exists yet.
struct DeviceFixture {
  static let runningVersion = Version(major: 1, minor: 0, revision: 0)
  let medium: MemoryMedium
  let runningImage: [UInt8]
  let windowCapacity: UInt32

  init(slotCapacity: Int, windowCapacity: UInt32 = 16 * 1024) {
    medium = MemoryMedium(slotCapacity: slotCapacity)
    var generator = SeededGenerator(seed: 0xA11CE)
    runningImage = (0..<min(slotCapacity, 3000)).map { _ in UInt8.random(in: 0...255, using: &generator) }
    medium.fill(.a, with: runningImage)
    self.windowCapacity = windowCapacity
  }

  var storage: DeviceStorage { DeviceStorage(slots: SlotPair(medium: medium), records: medium) }

  func makeHost() throws -> ReceiverHost {
    try ReceiverHost(
      storage: storage, windowCapacity: windowCapacity, factoryVersion: Self.runningVersion,
      imageCheck: StandardImageCheck.check)
  }

  /// The running slot still holds, byte for byte, what it held before anything happened.
  var runningSlotUntouched: Bool {
    Array(medium.slotBytes(.a).prefix(runningImage.count)) == runningImage
      && medium.slotBytes(.a).dropFirst(runningImage.count).allSatisfy { $0 == 0 }
  }

  /// Pushes `image` to this device over a simulated link. A power cut reboots the medium with
  /// `powerCutSeed` (nil: every unsynced write is lost). Returns the run and the sender's report,
  /// which is nil (and recorded as an issue) unless the push succeeded.
  func push(
    _ image: [UInt8], version: Version, conditions: LinkConditions, faults: DeviceFaults = DeviceFaults(),
    seed: UInt64,
    sender: SenderConfiguration? = nil, powerCutSeed: UInt64? = nil, limit: Duration = .seconds(3600),
    onBoot: ((ReceiverHost) throws -> Void)? = nil, sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> (result: Simulation.Result, report: SenderReport?, device: ReceiverHost?) {
    var simulation = try Simulation(
      image: image, sender: sender ?? SenderConfiguration(version: version, maxConnectAttempts: 20),
      conditions: conditions, faults: faults, seed: seed
    ) { afterPowerCut in
      if afterPowerCut { medium.reboot(seed: powerCutSeed) }
      let host = try makeHost()
      try onBoot?(host)
      return host
    }
    let result = try simulation.run(limit: limit)
    guard case .succeeded(let report) = result.outcome else {
      Issue.record("push failed: \(String(describing: result.outcome))", sourceLocation: sourceLocation)
      return (result, nil, simulation.device)
    }
    return (result, report, simulation.device)
  }

  static func image(size: Int, seed: UInt64) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    return (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
  }
}
