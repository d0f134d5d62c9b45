import OTAWire

/// Test data from OTAWire's `SeededGenerator` (SplitMix64): the same seed gives the same bytes on
/// every run and every machine.
extension SeededGenerator {
  /// The next `count` bytes of the generator.
  public mutating func bytes(_ count: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    while bytes.count < count {
      let word = next()
      for shift in stride(from: 0, to: 64, by: 8) where bytes.count < count {
        bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
      }
    }
    return bytes
  }

  /// `count` bytes from a generator seeded with `seed`.
  public static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    return generator.bytes(count)
  }
}
