import Foundation
import OTADeviceFuzzing
import OTAFuzzing
import OTALink
import OTATestSupport
import OTAWire
import Testing

/// The interleaving fuzzer in the ordinary suite: its seeds reach deep (whole updates over each
/// protocol, restarts, power cuts, another central refused), run clean, and so do a few hundred
/// mutations of them; each seed file is what `InterleavingSeeds` builds.
@Suite("Interleaving fuzzer")
struct InterleavingFuzzerTests {
  @Test(arguments: InterleavingSeeds.all.map(\.name))
  func eachSeedRunsCleanAndIsTheFileCheckedIn(name: String) throws {
    // [SEC-ATK-29] [SEC-ATK-35]
    let seed = try #require(InterleavingSeeds.all.first { $0.name == name })
    let outcome = InterleavingFuzzer.run(seed.bytes, tracing: true)
    #expect(outcome.violations == [], "\(outcome.trace.suffix(30).joined(separator: "\n"))")
    let file = FuzzInputs.files("Seeds", "interleaving").first { $0.name == name }
    if ProcessInfo.processInfo.environment["BLUEOTA_WRITE_SEEDS"] == "1" {
      let url = FuzzInputs.directory.appendingPathComponent("Seeds/interleaving/\(name)")
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(seed.bytes).write(to: url)
    } else {
      #expect(
        file?.bytes == seed.bytes, "Seeds/interleaving/\(name) is stale: BLUEOTA_WRITE_SEEDS=1 writes it")
    }
  }

  /// Each whole update activates (and its restart boots it); the power cut reboots; the second
  /// Legacy central is refused.
  @Test func theSeedsReachDeep() throws {
    func counts(_ name: String) throws -> InterleavingFuzzer.Counts {
      let seed = try #require(InterleavingSeeds.all.first { $0.name == name })
      return InterleavingFuzzer.run(seed.bytes).counts
    }
    for name in ["ota-push", "legacy-update", "secure-update"] {
      #expect(try counts(name).activations == 1, "\(name)")
    }
    #expect(try counts("smp-upload-test-reset").activations == 1)
    #expect(try counts("smp-upload-test-reset").restarts == 1)
    // An SMP test armed by the time the Legacy session came back (whose reset is then refused).
    #expect(try counts("legacy-then-smp-test-then-legacy").activations == 1)
    #expect(try counts("legacy-then-smp-test-then-legacy").restarts == 0)
    // SMP confirms its trial; then Secure DFU, once SMP has been quiet for 30 s, updates again.
    #expect(try counts("smp-confirm-then-secure").activations == 2)
    #expect(try counts("ota-power-cut").powerCuts == 1)
    #expect(try counts("ota-power-cut").activations >= 1)
    #expect(try counts("legacy-two-centrals").refusedWrites == 2)
    #expect(try counts("legacy-two-centrals").activations == 1)
  }

  /// The seeded part of the 10 s the test command fuzzes for: mutations of the seeds and random
  /// inputs, the same on every run.
  @Test func mutationsOfTheSeedsRunClean() {
    // [SEC-ATK-35]
    let seeds = InterleavingSeeds.all.map(\.bytes)
    var generator = SeededGenerator(seed: 0x1A7E_41EA)
    var failures = 0
    for _ in 0..<300 {
      let input = generator.input(from: seeds, maxLength: 600)
      let outcome = InterleavingFuzzer.run(input)
      if !outcome.violations.isEmpty, failures < 3 {
        failures += 1
        Issue.record("input \(input): \(outcome.violations)")
      }
    }
  }
}
