import Foundation
import OTAGateway
import OTATestSupport
import Testing

/// The DDI answers goosebit 0.2.12 gave, byte for byte (Fixtures/goosebit/README.md says how each
/// was captured), read as the gateway reads them.
struct GoosebitAnswerTests {
  static func fixture<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
    let bytes = try RepositoryRoot.bytes("Tests/OTAGatewayTests/Fixtures/goosebit/\(name)")
    return try JSONDecoder().decode(T.self, from: Data(bytes))
  }

  @Test func aNewTargetIsAskedForItsAttributesFirst() throws {
    let base = try Self.fixture("poll-registration.json", as: DDIControllerBase.self)
    #expect(base.configData != nil)
    #expect(base.deploymentBase == nil)
    #expect(base.pollingInterval == .seconds(10))
  }

  @Test func aRolloutShowsAsADeploymentLink() throws {
    let base = try Self.fixture("poll-deployment.json", as: DDIControllerBase.self)
    let link = try #require(base.deploymentBase)
    #expect(link.href.hasSuffix("/deploymentBase/1"))
    #expect(base.cancelAction == nil)
  }

  @Test func theDeploymentNamesOneSWUWithItsSHA1() throws {
    let deployment = try Self.fixture("deployment-base.json", as: DDIDeploymentBase.self)
    #expect(deployment.id == "1")
    let artifact = try ArtifactReference.choose(from: deployment, serverScheme: "http")
    #expect(artifact.filename == "test-2.0.0.swu")
    #expect(artifact.algorithm == .sha1)
    #expect(artifact.hash == "7f99d394ef8256e98656ff1813143b99d565615e")
    #expect(artifact.size == 5120)
    #expect(artifact.key == "sha1-7f99d394ef8256e98656ff1813143b99d565615e")
    #expect(artifact.url.hasSuffix("/DEFAULT/controller/v1/dev1/download"))
    // The same answer from an HTTPS server would be a downgrade of the download: refused.
    #expect(throws: GatewayRefusal.self) {
      try ArtifactReference.choose(from: deployment, serverScheme: "https")
    }
  }

  /// The answers are Codable: what decodes encodes, under DDI's own names, to JSON that decodes equal.
  @Test func capturedAnswersEncodeToJSONThatDecodesEqual() throws {
    let folder = RepositoryRoot.url("Tests/OTAGatewayTests/Fixtures/goosebit")
    let polls = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
      $0.hasPrefix("poll-")
    }
    for name in polls {
      let base = try Self.fixture(name, as: DDIControllerBase.self)
      let json = try JSONEncoder().encode(base)
      #expect(String(decoding: json, as: UTF8.self).contains(#""_links":"#), "\(name)")
      #expect(try JSONDecoder().decode(DDIControllerBase.self, from: json) == base, "\(name)")
    }
    let deployment = try Self.fixture("deployment-base.json", as: DDIDeploymentBase.self)
    let json = try JSONEncoder().encode(deployment)
    #expect(try JSONDecoder().decode(DDIDeploymentBase.self, from: json) == deployment)
    #expect(
      try ArtifactReference.choose(
        from: JSONDecoder().decode(DDIDeploymentBase.self, from: json), serverScheme: "http"
      ).size == 5120)
  }

  @Test func everyCapturedPollDecodes() throws {
    let folder = RepositoryRoot.url("Tests/OTAGatewayTests/Fixtures/goosebit")
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
      $0.hasPrefix("poll-")
    }
    #expect(names.count >= 5)
    for name in names {
      let base = try Self.fixture(name, as: DDIControllerBase.self)
      #expect(base.pollingInterval != nil, "\(name)")
    }
  }
}
