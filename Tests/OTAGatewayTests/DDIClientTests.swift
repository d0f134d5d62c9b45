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

  @Test func pollsWithTheTargetsTokenAndSendsFeedbackToTheActionsLink() async throws {
    let server = try await ScriptedServer([
      (
        "GET /DEFAULT/controller/v1/dev-1",
        { _ in
          (
            200, [:],
            Data(
              #"{"config":{"polling":{"sleep":"00:00:05"}},"_links":{"deploymentBase":{"href":"PLACEHOLDER"}}}"#
                .utf8)
          )
        }
      ),
      (
        "POST /DEFAULT/controller/v1/dev-1/deploymentBase/3/feedback",
        { _ in (200, [:], Data(#"{"id":"3"}"#.utf8)) }
      ),
      ("PUT /DEFAULT/controller/v1/dev-1/configData", { _ in (200, [:], Data("{}".utf8)) }),
    ])
    let client = Self.client(server)
    let base = try await offThread { Result { try client.poll("dev-1") } }.get()
    #expect(base.pollingInterval == .seconds(5))
    let link = DDILink(href: "\(server.url)/DEFAULT/controller/v1/dev-1/deploymentBase/3?c=-12")
    try await offThread {
      Result { try client.feedback(.proceeding(40, of: 100, "Downloaded 40%"), on: link, for: "dev-1") }
    }.get()
    try await offThread { Result { try client.configData(["hw_boardname": "sim"], for: "dev-1") } }.get()
    let seen = server.requests
    #expect(seen.map(\.method) == ["GET", "POST", "PUT"])
    #expect(seen.allSatisfy { $0.headers["authorization"] == "TargetToken t1" })
    let feedback = try JSONSerialization.jsonObject(with: Data(seen[1].body.utf8)) as? [String: Any]
    let status = feedback?["status"] as? [String: Any]
    #expect(status?["execution"] as? String == "proceeding")
    #expect((status?["details"] as? [String]) == ["Downloaded 40%"])
    #expect(feedback?["timestamp"] is Int)
    #expect(seen[2].body.contains(#""mode":"merge""#))
    await server.stop()
  }

  @Test func anExpiredTokenSaysSo() async throws {
    let server = try await ScriptedServer([
      ("GET /DEFAULT/controller/v1/dev-1", { _ in (401, [:], Data(#"{"detail":"token"}"#.utf8)) })
    ])
    let result = await offThread { Result { try Self.client(server).poll("dev-1") } }
    guard case .failure(let error) = result else {
      Issue.record("polled")
      return
    }
    #expect("\(error)".contains("the server refused the token (HTTP 401)"))
    await server.stop()
  }

  @Test(arguments: ["not json", "null", "[1,2]", #"{"_links": 5}"#, String(repeating: "x", count: 2 << 20)])
  func garbageIsRefusedQuotingItsStart(body: String) async throws {
    let server = try await ScriptedServer([
      ("GET /DEFAULT/controller/v1/dev-1", { _ in (200, [:], Data(body.utf8)) })
    ])
    let result = await offThread { Result { try Self.client(server).poll("dev-1") } }
    guard case .failure(let error) = result else {
      Issue.record("polled")
      return
    }
    let text = "\(error)"
    #expect(text.contains("is not a DDI controller base") || text.contains("longer than"), "\(text)")
    await server.stop()
  }

  @Test func linksToAnotherServerGetNeitherTokenNorRequest() async throws {
    let server = try await ScriptedServer([])
    let other = try await ScriptedServer([("GET /steal", { _ in (200, [:], Data("{}".utf8)) })])
    let client = Self.client(server)
    let result = await offThread {
      Result { try client.deployment(DDILink(href: "\(other.url)/steal"), for: "dev-1") }
    }
    guard case .failure(let error) = result else {
      Issue.record("followed")
      return
    }
    #expect("\(error)".contains("a link to another server"))
    #expect(other.requests.isEmpty)
    #expect(client.downloadHeaders("\(other.url)/a.swu", for: "dev-1").isEmpty)
    #expect(client.downloadHeaders("\(server.url)/a.swu", for: "dev-1") == ["Authorization: TargetToken t1"])
    await server.stop()
    await other.stop()
  }

  @Test func nothingListensNamesTheConnection() async {
    let client = DDIClient(
      server: "http://127.0.0.1:9", tenant: "DEFAULT", authorization: .none,
      http: CurlHTTPClient(settings: HTTPSettings()))
    let result = await offThread { Result { try client.poll("dev-1") } }
    guard case .failure(let error) = result else {
      Issue.record("polled")
      return
    }
    #expect("\(error)".contains("no answer from http://127.0.0.1:9/DEFAULT/controller/v1/dev-1"), "\(error)")
  }
}
