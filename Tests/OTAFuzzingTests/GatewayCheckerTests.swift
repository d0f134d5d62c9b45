import Foundation
import OTAFuzzing
import OTAGateway
import OTAGatewayFuzzing
import Testing

/// The gateway checks can fail: values a broken reader could produce are each reported, and what
/// the readers really give is not.
@Suite("Gateway invariant checks")
struct GatewayCheckerTests {
  static let members = [
    SWUArchive.Member(name: "sw-description", bytes: Array("software = { version = \"1.0.0+0\"; };".utf8)),
    SWUArchive.Member(name: "fw.bin", bytes: [1, 2, 3, 4, 5]),
  ]

  @Test func anArchiveThatIsNotTheInputsMembersIsReported() throws {
    let bytes = SWUArchive(members: Self.members).bytes()
    let read = try SWUArchive(bytes: bytes)
    #expect(SWUArchiveChecks.layout(read, of: bytes) == [])
    var otherBytes = read
    otherBytes.members[1].bytes[0] = 9
    #expect(SWUArchiveChecks.layout(otherBytes, of: bytes).map(\.invariant) == ["member range", "checksum"])
    var otherName = read
    otherName.members[1].name = "fw.bim"
    #expect(SWUArchiveChecks.layout(otherName, of: bytes).map(\.invariant) == ["member name"])
    var fewer = read
    fewer.members.removeLast()
    #expect(SWUArchiveChecks.layout(fewer, of: bytes).map(\.invariant) == ["layout"])
    #expect(SWUArchiveChecks.layout(read, of: Array(bytes.dropLast(8))).map(\.invariant) == ["layout"])
  }

  /// The writer writes any name; the reader takes names of at most 4095 bytes.
  @Test func anArchiveThatDoesNotReadBackIsReported() {
    #expect(SWUArchiveChecks.roundTrip(SWUArchive(members: Self.members)) == [])
    let long = SWUArchive(
      members: Self.members + [.init(name: String(repeating: "n", count: 5000), bytes: [])])
    #expect(SWUArchiveChecks.roundTrip(long).map(\.invariant) == ["round trip"])
  }

  @Test func aShapeTheParserDoesNotGiveIsReported() throws {
    let parsed = try LibconfigParser.parse("a = { b = ( 1, [ 2.5, \"x\" ] ); };")
    #expect(LibconfigShape.violations(parsed, inputCount: 40) == [])
    var deep = LibconfigValue.integer(1)
    for _ in 0..<40 { deep = .list([deep]) }
    let cases: [(LibconfigValue, String)] = [
      (.group([("a", deep)]), "depth"),
      (.group([("a", .integer(1)), ("a", .integer(2))]), "setting name"),
      (.group([("9a", .integer(1))]), "setting name"),
      (.group([("a", .array([.list([])]))]), "array of scalars"),
      (.group([("a", .float(.nan))]), "finite float"),
    ]
    for (value, invariant) in cases {
      #expect(Set(LibconfigShape.violations(value, inputCount: 100).map(\.invariant)) == [invariant])
    }
    #expect(LibconfigShape.violations(parsed, inputCount: 2).map(\.invariant) == ["value count"])
  }

  /// A value the writer cannot write so that it parses back.
  @Test func aLibconfigValueThatDoesNotParseBackIsReported() throws {
    #expect(LibconfigFuzzer.roundTrip(try LibconfigParser.parse("a = \"x\\ny\"; b = [ -0.0, 1e300 ];")) == [])
    #expect(
      LibconfigFuzzer.roundTrip(.group([("a b", .integer(1))])).map(\.invariant) == ["libconfig round trip"])
  }

  @Test func aDescriptionThatDoesNotReadBackIsReported() {
    let image = SWDescription.Image(filename: "fw.bin", type: SWDescription.imageType, sha256: nil)
    let good = SWDescription(
      version: "1.0.0", targets: [.init(board: "sim", revisions: ["1"], images: [image])])
    #expect(SWDescriptionChecks.check(good) == [])
    let badBoard = SWDescription(
      version: "1.0.0", targets: [.init(board: "a b", revisions: [], images: [image])])
    #expect(SWDescriptionChecks.check(badBoard).map(\.invariant) == ["board name", "description round trip"])
  }

  static func deployment(hashes: String, href: String = "https://s.example/fw.swu") throws
    -> DDIDeploymentBase
  {
    let json = """
      {"id":"1","deployment":{"chunks":[{"artifacts":[{"filename":"fw.swu","size":10,"hashes":{\(hashes)},
      "_links":{"download":{"href":"\(href)"}}}]}]}}
      """
    return try JSONDecoder().decode(DDIDeploymentBase.self, from: Data(json.utf8))
  }

  @Test func aChosenArtifactThatBreaksTheRulesIsReported() throws {
    let sha1 = String(repeating: "a", count: 40)
    let base = try Self.deployment(hashes: #""sha1":"\#(sha1)""#)
    let chosen = try ArtifactReference.choose(from: base, serverScheme: "https")
    #expect(DDIChecks.reference(chosen, in: base, serverScheme: "https") == [])
    let cases: [(ArtifactReference, String)] = [
      (.init(filename: "other.swu", size: 10, algorithm: .sha1, hash: sha1, url: chosen.url), "artifact"),
      (
        .init(
          filename: "fw.swu", size: 10, algorithm: .sha1, hash: String(repeating: "ａ", count: 40),
          url: chosen.url), "hash"
      ),
      (
        .init(filename: "fw.swu", size: 10, algorithm: .sha1, hash: sha1, url: "http://s.example/fw.swu"),
        "link"
      ),
    ]
    for (reference, invariant) in cases {
      #expect(
        DDIChecks.reference(reference, in: base, serverScheme: "https").map(\.invariant).contains(invariant))
    }
    let both = try Self.deployment(
      hashes: #""sha1":"\#(sha1)","sha256":"\#(String(repeating: "b", count: 64))""#)
    #expect(DDIChecks.reference(chosen, in: both, serverScheme: "https").map(\.invariant) == ["hash"])
  }

  @Test func pollingIntervalsAreCheckedAgainstTheirText() {
    #expect(DDIChecks.pollingInterval("00:05:00") == [])
    #expect(DDIChecks.pollingInterval("9999:59:59") == [])
    #expect(DDIChecks.pollingInterval("bad") == [])
  }
}
