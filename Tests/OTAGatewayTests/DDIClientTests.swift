import Foundation
import OTAGateway
import OTAGatewayHTTP
import Testing

/// The DDI client against a scripted server: the token where it belongs, and a broken or hostile
/// server's answers refused with a line that names the cause.
@Suite(.serialized)
struct DDIClientTests {
  static func client(_ server: ScriptedServer, _ authorization: DDIAuthorization = .targets(["dev-1": "t1"]))
    -> DDIClient
  {
    DDIClient(
      server: server.url, tenant: "DEFAULT", authorization: authorization,
      http: CurlHTTPClient(settings: HTTPSettings()))
  }

  @Test func pollsWithTheTargetsTokenAndSendsFeedbackToTheActionsLink() throws {
    let server = try ScriptedServer([
      "GET /DEFAULT/controller/v1/dev-1": .init(
        body: Array(#"{"config":{"polling":{"sleep":"00:00:05"}},"_links":{}}"#.utf8)),
      "POST /DEFAULT/controller/v1/dev-1/deploymentBase/3/feedback": .init(body: Array(#"{"id":"3"}"#.utf8)),
      "PUT /DEFAULT/controller/v1/dev-1/configData": .init(body: Array("{}".utf8)),
    ])
    let client = Self.client(server)
    let base = try client.poll("dev-1")
    #expect(base.pollingInterval == .seconds(5))
    let link = DDILink(href: "\(server.url)/DEFAULT/controller/v1/dev-1/deploymentBase/3?c=-12")
    try client.feedback(.proceeding(40, of: 100, "Downloaded 40%"), on: link, for: "dev-1")
    try client.configData(["hw_boardname": "sim"], for: "dev-1")
    let seen = server.requests
    #expect(seen.map(\.method) == ["GET", "POST", "PUT"])
    #expect(seen.allSatisfy { $0.headers["authorization"] == "TargetToken t1" })
    let feedback = try JSONSerialization.jsonObject(with: Data(seen[1].body.utf8)) as? [String: Any]
    let status = feedback?["status"] as? [String: Any]
    #expect(status?["execution"] as? String == "proceeding")
    #expect((status?["details"] as? [String]) == ["Downloaded 40%"])
    #expect(feedback?["timestamp"] is Int)
    #expect(seen[2].body.contains(#""mode":"merge""#))
    server.stop()
  }

  @Test func anExpiredTokenSaysSo() throws {
    let server = try ScriptedServer([
      "GET /DEFAULT/controller/v1/dev-1": .init(status: 401, body: Array(#"{"detail":"token"}"#.utf8))
    ])
    let result = Result { try Self.client(server).poll("dev-1") }
    guard case .failure(let error) = result else {
      Issue.record("polled")
      return
    }
    #expect("\(error)".contains("the server refused the token (HTTP 401)"))
    server.stop()
  }

  @Test(arguments: ["not json", "null", "[1,2]", #"{"_links": 5}"#, String(repeating: "x", count: 2 << 20)])
  func garbageIsRefusedQuotingItsStart(body: String) throws {
    let server = try ScriptedServer(["GET /DEFAULT/controller/v1/dev-1": .init(body: Array(body.utf8))])
    let result = Result { try Self.client(server).poll("dev-1") }
    guard case .failure(let error) = result else {
      Issue.record("polled")
      return
    }
    let text = "\(error)"
    #expect(text.contains("is not a DDI controller base") || text.contains("longer than"), "\(text)")
    server.stop()
  }

  @Test func linksToAnotherServerGetNeitherTokenNorRequest() throws {
    let server = try ScriptedServer([:])
    let other = try ScriptedServer(["GET /steal": .init(body: Array("{}".utf8))])
    let client = Self.client(server)
    let result = Result { try client.deployment(DDILink(href: "\(other.url)/steal"), for: "dev-1") }
    guard case .failure(let error) = result else {
      Issue.record("followed")
      return
    }
    #expect("\(error)".contains("a link to another server"))
    #expect(other.requests.isEmpty)
    #expect(client.downloadHeaders("\(other.url)/a.swu", for: "dev-1").isEmpty)
    #expect(client.downloadHeaders("\(server.url)/a.swu", for: "dev-1") == ["Authorization: TargetToken t1"])
    server.stop()
    other.stop()
  }

  @Test func nothingListensNamesTheConnection() {
    let client = DDIClient(
      server: "http://127.0.0.1:9", tenant: "DEFAULT", authorization: .none,
      http: CurlHTTPClient(settings: HTTPSettings()))
    let result = Result { try client.poll("dev-1") }
    guard case .failure(let error) = result else {
      Issue.record("polled")
      return
    }
    #expect("\(error)".contains("no answer from http://127.0.0.1:9/DEFAULT/controller/v1/dev-1"), "\(error)")
  }
}
