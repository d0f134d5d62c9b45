import OTAFuzzing
import OTATrustFuzzing
import Testing

/// Every checked-in input runs clean: the seeds, and each crasher the fuzzers found once (fixed since).
@Suite("Fuzz seeds and regressions")
struct ReplayTests {
  static let targets = [
    "wire", "mcuboot", "receiver", "trust", "cbor", "interleaving", "swu", "libconfig", "ddi",
  ]

  @Test(arguments: targets)
  func seedsRunClean(target: String) throws {
    // [SEC-ATK-62]
    let seeds = FuzzInputs.files("Seeds", target)
    #expect(seeds.count >= 3, "each target has a handful of seeds")
    let check = try #require(FuzzInputs.entries[target])
    for seed in seeds {
      #expect(check(seed.bytes) == [], "Seeds/\(target)/\(seed.name)")
    }
  }

  @Test(arguments: targets)
  func regressionsRunClean(target: String) throws {
    // [SEC-ATK-62]
    let check = try #require(FuzzInputs.entries[target])
    for regression in FuzzInputs.files("Regressions", target) {
      #expect(check(regression.bytes) == [], "Regressions/\(target)/\(regression.name)")
    }
  }

  /// The trust seeds' images carry signatures by the test keys that verify, so fuzzing starts at the
  /// signature checks themselves rather than at "untrusted key".
  @Test func trustImageSeedsVerify() {
    let images = FuzzInputs.files("Seeds", "trust").filter { $0.name.hasPrefix("image-") }
    #expect(images.count == 3)
    for image in images {
      guard case .verified = TrustFuzzer.verdict(ofImage: Array(image.bytes.dropFirst())) else {
        Issue.record("Seeds/trust/\(image.name) does not verify")
        continue
      }
    }
  }

  /// The receiver seeds reach the depths they are named for, so fuzzing starts from there.
  @Test func receiverSeedsGoAllTheWay() {
    let seeds = Dictionary(
      uniqueKeysWithValues: FuzzInputs.files("Seeds", "receiver").map { ($0.name, $0.bytes) })
    let whole = ReceiverFuzzer.run(seeds["whole-transfer-validate-activate-confirm"] ?? [])
    #expect(whole.violations == [])
    #expect(whole.windowsCommitted == 2)
    #expect(whole.activations == 1)
    let cut = ReceiverFuzzer.run(seeds["power-cut-during-commit"] ?? [])
    #expect(cut.violations == [])
    #expect(cut.windowsCommitted >= 1)
  }
}
