import Foundation
import OTAGateway
import OTAGatewayHTTP
import OTASystem
import OTATestSupport
import OTAWire
import Testing

/// A redirect never lowers the scheme: an https download is not followed to http.
@Suite(.serialized)
struct RedirectTests {
  @Test func anHTTPSRequestRedirectsToHTTPSOnly() {
    // [SEC-GW-4]
    #expect(CurlHTTPClient.redirectProtocols(from: "https://hawkbit.example.com/a") == "https")
    #expect(CurlHTTPClient.redirectProtocols(from: "HTTPS://hawkbit.example.com/a") == "https")
    #expect(CurlHTTPClient.redirectProtocols(from: "http://127.0.0.1:8080/a") == "http,https")
  }

  static var openssl: Bool { FileSystem.isExecutableFile("/usr/bin/openssl") }

  /// A self-signed certificate for 127.0.0.1, made by openssl in `folder`.
  static func certificate(in folder: TemporaryDirectory) throws -> (certificate: String, key: String) {
    var spawn = Spawn(
      "/usr/bin/openssl",
      arguments: [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
        "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", folder.path("key.pem"), "-out",
        folder.path("cert.pem"),
      ])
    spawn.standardOutput = .null
    spawn.standardError = .null
    _ = try spawn.start().waitForExit()
    return (folder.path("cert.pem"), folder.path("key.pem"))
  }

  /// An HTTPS server whose artifact link redirects to an HTTP server holding the file: refused,
  /// and the HTTP server never asked; the same redirect to HTTPS is followed.
  @Test(.enabled(if: openssl)) func anHTTPSArtifactRedirectedToHTTPIsRefused() throws {
    // [SEC-GW-4]
    let folder = try TemporaryDirectory(label: "gateway-redirect")
    defer { folder.remove() }
    let tls = try Self.certificate(in: folder)
    let file = SeededGenerator.bytes(5000, seed: 3)
    let plain = try ScriptedServer(["GET /a.swu": .init(body: file)])
    let secure = try ScriptedServer(
      [
        "GET /down": .init(status: 302, headers: ["Location": "\(plain.url)/a.swu"]),
        "GET /up": .init(status: 302, headers: ["Location": "/a.swu"]),
        "GET /a.swu": .init(body: file),
      ], tls: tls)
    defer {
      plain.stop()
      secure.stop()
    }
    let http = CurlHTTPClient(settings: HTTPSettings(caFile: tls.certificate))
    var received: [UInt8] = []
    let down = Result { () throws(HTTPFailure) in
      try http.download("\(secure.url)/down", headers: [], from: 0, limit: 10_000) { _ in true }
    }
    guard case .failure(let failure) = down else {
      Issue.record("the redirect to http was followed")
      return
    }
    #expect(failure.reason.lowercased().contains("protocol"), "\(failure)")
    #expect(plain.requests.isEmpty, "nothing was asked over plain HTTP")
    let up = try http.download("\(secure.url)/up", headers: [], from: 0, limit: 10_000) { chunk in
      received += chunk
      return true
    }
    #expect(up.status == 200)
    #expect(received == file)
  }
}
