import OTADevice
import OTAEngine
import OTASimulation
import OTAStorage
import OTAWire

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

  static func image(size: Int, seed: UInt64) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    return (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
  }
}
