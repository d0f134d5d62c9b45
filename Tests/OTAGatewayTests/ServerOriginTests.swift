import Testing

@testable import OTAGatewayHTTP

/// The token goes to the gateway's own server only: the same scheme, host and port (the scheme's
/// default port written or not), under the server's path.
@Suite struct ServerOriginTests {
  @Test func theDefaultPortWrittenOrNotIsOneServer() throws {
    let server = try #require(ServerOrigin("http://10.0.2.100:80"))
    #expect(server.contains("http://10.0.2.100/DEFAULT/controller/v1/a"))
    #expect(server.contains("http://10.0.2.100:80/DEFAULT/controller/v1/a"))
    #expect(try #require(ServerOrigin("https://Example.org")).contains("https://example.org:443/x"))
  }

  @Test func anotherSchemeHostPortOrPathIsAnotherServer() throws {
    let server = try #require(ServerOrigin("https://ddi.example.org:8443/hawkbit"))
    #expect(server.contains("https://ddi.example.org:8443/hawkbit/DEFAULT/controller/v1/a"))
    #expect(!server.contains("http://ddi.example.org:8443/hawkbit/x"), "another scheme")
    #expect(!server.contains("https://ddi.example.org/hawkbit/x"), "another port")
    #expect(!server.contains("https://ddi.example.org.evil.net:8443/hawkbit/x"), "another host")
    #expect(!server.contains("https://evil.net@ddi.example.org:8443/other/x"), "another path")
    #expect(!server.contains("https://ddi.example.org:8443/hawkbitx/x"), "a path that only begins alike")
    #expect(
      !server.contains("https://ddi.example.org:8443@evil.net/hawkbit/x"), "user info before another host")
    #expect(!server.contains("ftp://ddi.example.org/hawkbit/x"))
    #expect(ServerOrigin("http://host:99999/") == nil && ServerOrigin("host/x") == nil)
  }
}
