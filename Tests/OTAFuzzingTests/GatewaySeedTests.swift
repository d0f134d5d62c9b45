import OTAGateway
import OTAGatewayFuzzing
import Testing

/// The gateway targets' seeds reach what they are there for, so that fuzzing starts deep: archives
/// that open to images, sw-descriptions that read, deployments with a chosen artifact.
@Suite("Gateway fuzz seeds")
struct GatewaySeedTests {
  /// Every .swu seed opens to an image for at least one board: past the archive, sw-description,
  /// the SHA-256 and the MCUboot header.
  @Test func swuSeedsOpenToImages() {
    let seeds = FuzzInputs.files("Seeds", "swu")
    #expect(seeds.count >= 5)
    for seed in seeds {
      #expect(SWUFuzzer.openedImages(seed.bytes) >= 1, "Seeds/swu/\(seed.name)")
    }
  }

  @Test func libconfigSeedsAreSWDescriptions() {
    let seeds = FuzzInputs.files("Seeds", "libconfig")
    #expect(seeds.count >= 4)
    let read = seeds.filter { (try? SWDescription(text: String(decoding: $0.bytes, as: UTF8.self))) != nil }
    // All but the one of every kind of value, which has no `software` group.
    #expect(read.count == seeds.count - 1, "\(seeds.map(\.name)) read: \(read.map(\.name))")
  }

  @Test func ddiDeploymentSeedsChooseTheirSWU() {
    let chosen = FuzzInputs.files("Seeds", "ddi").compactMap { DDIFuzzer.chosenArtifact($0.bytes) }
    #expect(chosen.map(\.filename).sorted() == ["fw-2.0.0.swu", "fw.swu", "test-2.0.0.swu"])
    #expect(chosen.filter { $0.algorithm == .sha256 }.map(\.filename).sorted() == ["fw-2.0.0.swu", "fw.swu"])
  }
}
