/// SplitMix64: a tiny, fully specified generator, so that a seed replays the same run (a simulated
/// link, a power cut's lost writes, test data) on every platform and Swift version.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  public init(seed: UInt64) { state = seed }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number in `0..<bound` (`bound` > 0) by this file's arithmetic alone, so that it stays the same
  /// whatever the standard library's `random(in:using:)` does; the slight modulo bias does not matter.
  public mutating func next(below bound: Int) -> Int {
    Int(next() % UInt64(bound))
  }

  /// True with probability `p`.
  public mutating func chance(_ p: Double) -> Bool {
    p > 0 && Double.random(in: 0..<1, using: &self) < p
  }
}
