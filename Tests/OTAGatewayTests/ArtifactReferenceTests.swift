import Foundation
import OTAGateway
import Testing

/// What the gateway takes from a deployment before it fetches a byte.
struct ArtifactReferenceTests {
  static func deployment(_ artifacts: String) throws -> DDIDeploymentBase {
    let json = """
      {"id": "7", "deployment": {"download": "forced", "update": "forced",
       "chunks": [{"part": "os", "version": "2.0.0+0", "name": "app", "artifacts": [\(artifacts)]}]}}
      """
    return try JSONDecoder().decode(DDIDeploymentBase.self, from: Data(json.utf8))
  }

  static func artifact(
    _ name: String = "app.swu", size: Int = 100,
    hashes: String = #""sha1": "\#(String(repeating: "a", count: 40))""#,
    href: String = "https://server.example/DEFAULT/controller/v1/d/download"
  ) -> String {
    #"{"filename": "\#(name)", "size": \#(size), "hashes": {\#(hashes)}, "_links": {"download": {"href": "\#(href)"}}}"#
  }

  @Test func sha256IsPreferredWhenTheServerGivesBoth() throws {
    let sha256 = String(repeating: "B", count: 64)
    let chosen = try ArtifactReference.choose(
      from: Self.deployment(
        Self.artifact(
          hashes: #""sha1": "\#(String(repeating: "a", count: 40))", "SHA256": "\#(sha256)", "md5": "x""#)),
      serverScheme: "https")
    #expect(chosen.algorithm == .sha256)
    #expect(chosen.hash == sha256.lowercased())
  }

  @Test func theSWUIsPickedAmongOtherArtifacts() throws {
    let chosen = try ArtifactReference.choose(
      from: Self.deployment(Self.artifact("notes.txt") + "," + Self.artifact("fw.swu")), serverScheme: "https"
    )
    #expect(chosen.filename == "fw.swu")
  }

  @Test(arguments: [
    ("", "no artifact"),
    (
      ArtifactReferenceTests.artifact("a.swu") + "," + ArtifactReferenceTests.artifact("b.swu"),
      "none stands out"
    ),
    (ArtifactReferenceTests.artifact(hashes: #""md5": "0123""#), "no SHA-256 or SHA-1"),
    (ArtifactReferenceTests.artifact(hashes: #""sha1": "not-hex""#), "is not 40 hex digits"),
    // Fullwidth digits are hex digits to Character.isHexDigit: such a hash was taken, and the
    // whole artifact downloaded before it was refused for a digest it could never have.
    (
      ArtifactReferenceTests.artifact(hashes: #""sha1": "\#(String(repeating: "ａ", count: 40))""#),
      "is not 40 hex digits"
    ),
    (
      ArtifactReferenceTests.artifact(hashes: #""sha256": "\#(String(repeating: "１", count: 64))""#),
      "is not 64 hex digits"
    ),
    // Two spellings of one algorithm that disagree: which was taken hung on the process's hash
    // seed, so one run took the artifact and the next refused it (found by the ddi fuzz checks).
    (
      ArtifactReferenceTests.artifact(
        hashes:
          #""sha256": "\#(String(repeating: "b", count: 64))", "SHA256": "\#(String(repeating: "a", count: 40))""#
      ),
      "gives 2 different sha256 hashes"
    ),
    (ArtifactReferenceTests.artifact(size: 0), "claims 0 bytes"),
    (ArtifactReferenceTests.artifact(size: 1 << 40), "claims"),
    (ArtifactReferenceTests.artifact(href: "ftp://server.example/a.swu"), "is not HTTPS"),
    (ArtifactReferenceTests.artifact(href: "http://server.example/a.swu"), "is not HTTPS"),
  ])
  func aDeploymentThatCannotBeCheckedIsRefusedWithItsReason(artifacts: String, reason: String) throws {
    let deployment = try Self.deployment(artifacts)
    do {
      _ = try ArtifactReference.choose(from: deployment, serverScheme: "https")
      Issue.record("taken: \(artifacts)")
    } catch {
      #expect(error.description.contains(reason), "\(error)")
    }
  }

  @Test func garbageIsNoDeployment() {
    for text in ["null", "{}", #"{"id": 5}"#, #"{"id": "5", "deployment": {"chunks": "x"}}"#, "<html>"] {
      #expect(throws: (any Error).self, "\(text)") {
        try JSONDecoder().decode(DDIDeploymentBase.self, from: Data(text.utf8))
      }
    }
  }

  @Test func pollingIntervalsAreReadAndBounded() {
    #expect(DDIPollingInterval.parse("00:05:00") == .seconds(300))
    #expect(DDIPollingInterval.parse("12:00:01") == .seconds(43201))
    for bad in ["5", "00:60:00", "00:00:99", "-1:00:00", "a:b:c", "::", "00:00"] {
      #expect(DDIPollingInterval.parse(bad) == nil, "\(bad)")
    }
    let bounds = Duration.seconds(1)...Duration.seconds(3600)
    #expect(DDIPollingInterval.clamped(.zero, default: .seconds(60), bounds: bounds) == .seconds(1))
    #expect(
      DDIPollingInterval.clamped(.seconds(86400 * 7), default: .seconds(60), bounds: bounds) == .seconds(3600)
    )
    #expect(DDIPollingInterval.clamped(nil, default: .seconds(60), bounds: bounds) == .seconds(60))
  }

  /// The sleep is the time between two polls of a target: a cycle's own time counts in it.
  @Test func aLongCycleLeavesLessOfTheSleep() {
    #expect(DDIPollingInterval.remaining(of: .seconds(2), after: .zero) == .seconds(2))
    #expect(DDIPollingInterval.remaining(of: .seconds(2), after: .milliseconds(500)) == .milliseconds(1500))
    #expect(DDIPollingInterval.remaining(of: .seconds(2), after: .seconds(55)) == .zero)
    #expect(DDIPollingInterval.remaining(of: .seconds(60), after: .seconds(-1)) == .seconds(60))
  }
}
