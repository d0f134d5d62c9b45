import Foundation
import OTASystem
import OTATestSupport
import OTAWire

/// An HTTP server for one test on 127.0.0.1, in its own process (Fixtures/scripted_http.py), so
/// that a busy test run cannot starve it: each route answers as the test says, and every request
/// is kept (method, path, headers, body) so the test can check what the client sent.
final class ScriptedServer: Sendable {
  struct Route: Encodable {
    var status = 200
    var headers: [String: String] = [:]
    var body: [UInt8] = []
    /// Answer "Range: bytes=N-" with 206 and the body from N.
    var ranges = false

    enum CodingKeys: String, CodingKey { case status, headers, ranges, bodyHex = "body_hex" }
    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(status, forKey: .status)
      try container.encode(headers, forKey: .headers)
      try container.encode(ranges, forKey: .ranges)
      try container.encode(Hex.string(body), forKey: .bodyHex)
    }
  }

  struct Seen: Decodable, Sendable {
    var method: String
    var path: String
    var headers: [String: String]
    var body: String
  }

  let port: Int
  /// Serving HTTPS (with the certificate given).
  let tls: Bool
  private let child: ChildProcessID
  private let folder: TemporaryDirectory

  var url: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }

  /// The requests so far, in order.
  var requests: [Seen] {
    guard let text = try? String(contentsOfFile: folder.path("log.jsonl"), encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap {
      try? JSONDecoder().decode(Seen.self, from: Data($0.utf8))
    }
  }

  /// `routes`: "METHOD /path" to its answer; `tls`: a PEM certificate and key to serve HTTPS with.
  init(_ routes: [String: Route], tls: (certificate: String, key: String)? = nil) throws {
    self.tls = tls != nil
    folder = try TemporaryDirectory(label: "scripted-http")
    try JSONEncoder().encode(routes).write(to: URL(fileURLWithPath: folder.path("routes.json")))
    // OTASystem's spawn, not Foundation's Process: its wait is a plain waitpid.
    var spawn = Spawn(
      "/usr/bin/env",
      arguments: [
        "python3", RepositoryRoot.url("Tests/OTAGatewayTests/Fixtures/scripted_http.py").path,
        folder.path("routes.json"), folder.path("log.jsonl"), folder.path("port"),
      ] + (tls.map { [$0.certificate, $0.key] } ?? []))
    spawn.standardOutput = .null
    child = try spawn.start()
    // The server writes its port once it listens (at most 10 s).
    var port: Int?
    for _ in 0..<1000 {
      if let text = try? String(contentsOfFile: folder.path("port"), encoding: .utf8), let value = Int(text) {
        port = value
        break
      }
      Thread.sleep(forTimeInterval: 0.01)
    }
    guard let port else {
      child.kill()
      _ = try? child.waitForExit()
      throw CocoaError(.fileReadNoSuchFile)
    }
    self.port = port
  }

  func stop() {
    child.kill()
    _ = try? child.waitForExit()
    folder.remove()
  }
}
