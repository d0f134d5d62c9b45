import OTALab
import Testing

@Suite struct LabRequestGuardTests {
  @Test func theLabsOwnPageIsAnswered() {
    #expect(LabRequestGuard.refusal(method: "GET", host: "127.0.0.1:8080", origin: nil) == nil)
    #expect(
      LabRequestGuard.refusal(method: "POST", host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080") == nil)
    #expect(LabRequestGuard.refusal(method: "POST", host: "localhost:9", origin: "http://localhost:9") == nil)
    // A client that sends no Origin (curl, a script) may press a button.
    #expect(LabRequestGuard.refusal(method: "POST", host: "127.0.0.1", origin: nil) == nil)
  }

  @Test func anotherSitesButtonOrARebindingNameIsRefused() {
    let fromElsewhere = LabRequestGuard.refusal(
      method: "POST", host: "127.0.0.1:8080", origin: "https://example.com")
    #expect(fromElsewhere?.contains("Origin https://example.com") == true)
    // The loopback host on another port is another origin.
    #expect(
      LabRequestGuard.refusal(method: "POST", host: "127.0.0.1:8080", origin: "http://127.0.0.1:9000") != nil)
    let rebound = LabRequestGuard.refusal(method: "GET", host: "attacker.example:8080", origin: nil)
    #expect(rebound?.contains("attacker.example:8080") == true)
    #expect(LabRequestGuard.refusal(method: "GET", host: nil, origin: nil) != nil)
    #expect(LabRequestGuard.refusal(method: "GET", host: "127.0.0.1.attacker.example", origin: nil) != nil)
    #expect(LabRequestGuard.refusal(method: "GET", host: "127.0.0.1:80:80", origin: nil) != nil)
    #expect(LabRequestGuard.refusal(method: "GET", host: "127.0.0.1:", origin: nil) != nil)
  }
}
