import OTABoot
import OTAChecksum
import OTAEngine
import OTASimulation
import OTASocketLink
import OTAWire

/// Images for delta transfers: a running image, and a new one made from it the way a rebuild
/// changes a binary (bytes shifted by an insertion, scattered changed words, a new tail).
enum DeltaFixture {
  static func base(size: Int, seed: UInt64) -> [UInt8] { DeviceFixture.image(size: size, seed: seed) }

  static func edited(_ base: [UInt8], seed: UInt64) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    var image = base
    let insertAt = min(image.count, image.count / 3)
    image.insert(contentsOf: (0..<97).map { _ in UInt8.random(in: 0...255, using: &generator) }, at: insertAt)
    var position = 211
    while position + 4 <= image.count {
      image[position] &+= 1
      image[position + 1] &+= UInt8.random(in: 0...3, using: &generator)
      position += 1531
    }
    image.append(contentsOf: (0..<1500).map { _ in UInt8.random(in: 0...255, using: &generator) })
    return image
  }

  /// Text-like bytes that deflate well, for compressed transfers without a base.
  static func compressible(size: Int, seed: UInt64) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    let words = ["slot", "image", "window", "commit", "journal", "boot", "trial", "delta", " ", "\n"]
    var bytes: [UInt8] = []
    while bytes.count < size {
      bytes.append(contentsOf: Array(words[Int.random(in: 0..<words.count, using: &generator)].utf8))
    }
    return Array(bytes.prefix(size))
  }
}

extension DeviceFixture {
  /// Records the running slot's image (size, CRC32) in the boot state, as an earlier activation
  /// would have: what Info announces and copy operations are bounded by.
  func recordRunningImage() throws {
    let size = UInt32(runningImage.count)
    let crc = CRC32.checksum(runningImage)
    _ = try control.update { state in
      state.slots[.a].size = size
      state.slots[.a].crc32 = crc
    }
  }
}
