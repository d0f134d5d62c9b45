import Foundation
import OTAGateway
import OTAGatewayHTTP
import OTATestSupport
import Testing

/// hawkBit's confirmation resources from the gateway's side: the action read from its
/// `confirmationBase` link, a 404 read as "no longer waits", and the answer posted to its feedback.
@Suite(.serialized)
struct DDIConfirmationClientTests {
  @Test func readsTheActionAndPostsTheAnswerToItsFeedback() throws {
    let action = try RepositoryRoot.bytes("Tests/OTAGatewayTests/Fixtures/hawkbit/confirmation-base.json")
    let server = try ScriptedServer([
      "GET /DEFAULT/controller/v1/dev-1/confirmationBase/6": .init(body: action),
      "POST /DEFAULT/controller/v1/dev-1/confirmationBase/6/feedback": .init(body: []),
    ])
    let client = DDIClientTests.client(server)
    let link = DDILink(href: "\(server.url)/DEFAULT/controller/v1/dev-1/confirmationBase/6?c=-2122565939")
    let read = try #require(try client.confirmation(link, for: "dev-1"))
    #expect(read.id == "6")
    #expect(read.deployment.deployment.chunks.first?.artifacts.first?.filename == "binary.tgz")
    try client.confirm(
      DDIConfirmationFeedback(.denied, code: 15, details: ["the owner declined"]), on: link, for: "dev-1")
    let seen = server.requests
    #expect(seen.map(\.method) == ["GET", "POST"])
    #expect(seen.allSatisfy { $0.headers["authorization"] == "TargetToken t1" })
    let body = try JSONSerialization.jsonObject(with: Data(seen[1].body.utf8)) as? [String: Any]
    #expect(body?["confirmation"] as? String == "denied")
    #expect(body?["code"] as? Int == 15)
    #expect(body?["details"] as? [String] == ["the owner declined"])
    server.stop()
  }

  /// hawkBit answers 404 for an action that no longer waits for confirmation.
  @Test func anActionThatNoLongerWaitsIsNil() throws {
    let server = try ScriptedServer([:])
    let link = DDILink(href: "\(server.url)/DEFAULT/controller/v1/dev-1/confirmationBase/7")
    #expect(try DDIClientTests.client(server).confirmation(link, for: "dev-1") == nil)
    server.stop()
  }

  @Test func aConfirmationLinkToAnotherServerIsRefused() throws {
    let server = try ScriptedServer([:])
    let link = DDILink(href: "http://127.0.0.2:9/DEFAULT/controller/v1/dev-1/confirmationBase/7")
    let result = Result { try DDIClientTests.client(server).confirmation(link, for: "dev-1") }
    guard case .failure(let error) = result else {
      Issue.record("followed")
      return
    }
    #expect("\(error)".contains("a link to another server"))
    server.stop()
  }
}
