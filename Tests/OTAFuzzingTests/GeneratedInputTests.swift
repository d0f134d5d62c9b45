import OTAFuzzing
import OTALink
import OTAWire
import Testing

/// The fuzz targets' checks in the ordinary suite: a few thousand deterministic inputs per target,
/// random bytes and mutated seeds, must all run clean.
@Suite("Fuzz checks on generated inputs")
struct GeneratedInputTests {
  @Test(arguments: [
    ("wire", 4000, 96), ("mcuboot", 3000, 700), ("receiver", 2000, 400), ("trust", 1500, 900),
    ("cbor", 4000, 160), ("swu", 2000, 2100), ("libconfig", 4000, 600), ("ddi", 4000, 900),
  ])
  func generatedInputsRunClean(target: String, count: Int, maxLength: Int) throws {
    let check = try #require(FuzzInputs.entries[target])
    let seeds = FuzzInputs.files("Seeds", target).map(\.bytes)
    var generator = SeededGenerator(seed: 0x0B1E_07A0 ^ UInt64(target.utf8.count))
    var failures = 0
    for _ in 0..<count {
      let input = generator.input(from: seeds, maxLength: maxLength)
      let violations = check(input)
      if !violations.isEmpty, failures < 3 {
        failures += 1
        Issue.record("\(target) input \(input): \(violations)")
      }
    }
  }
}
