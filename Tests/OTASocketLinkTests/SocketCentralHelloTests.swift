import Foundation
import OTALink
import Testing

@testable import OTASocketLink

/// A peer that accepts the connection and never answers the hello (socat forwarding to a guest that
/// is rebooting, as the GRUB test's link did): the central gives up after `helloPatience` and says
/// why, so the push tries again instead of waiting on a dead connection until its restart deadline.
@Suite struct SocketCentralHelloTests {
  @Test func aPeerThatAcceptsAndNeverAnswersIsGivenUp() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("mute-\(UUID().uuidString).sock")
      .path
    let listener = try UnixSocket.listen(at: path)
    defer {
      listener.close()
      unlink(path)
    }
    let central = SocketCentral(path: path, conditions: try LinkConditions(spec: "mtu=247"))
    central.connect(now: .seconds(10))
    let accepted = try #require(try listener.acceptWaiting())
    defer { accepted.close() }
    #expect(central.nextDeadline == .seconds(15), "the hello's answer is waited for 5 s")
    #expect(central.service(readable: [], now: .seconds(14)).isEmpty)
    let events = central.service(readable: [], now: .seconds(15))
    guard case .connectFailed(let why)? = events.first else {
      Issue.record("expected connectFailed, got \(events)")
      return
    }
    #expect(why.contains("did not answer"))
    #expect(central.descriptors.isEmpty && central.nextDeadline == nil, "the socket is closed")
  }
}
