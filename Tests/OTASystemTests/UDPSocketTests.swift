import OTASystem
import Testing

@Suite struct UDPSocketTests {
  @Test func datagramsGoBothWaysOnLoopback() throws {
    let server = try UDPSocket(binding: UDPAddress(octets: [127, 0, 0, 1], port: 0))
    let client = try UDPSocket(binding: UDPAddress(octets: [127, 0, 0, 1], port: 0))
    let serverAddress = try #require(server.boundAddress)
    #expect(serverAddress.port != 0 && serverAddress.octets == [127, 0, 0, 1])
    #expect(try server.receive(maxLength: 64) == nil, "nothing waits: nil, not a block")
    #expect(try client.send([1, 2, 3], to: serverAddress))
    _ = try Poller.wait(for: [server.descriptor.rawValue], timeout: .seconds(5))
    let got = try #require(try server.receive(maxLength: 64))
    #expect(got.bytes == [1, 2, 3] && !got.truncated)
    #expect(got.from == client.boundAddress)
    try server.send([9], to: got.from)
    _ = try Poller.wait(for: [client.descriptor.rawValue], timeout: .seconds(5))
    #expect(try client.receive(maxLength: 64)?.bytes == [9])
  }

  @Test func aLongerDatagramIsCutAndSaysSo() throws {
    let server = try UDPSocket(binding: UDPAddress(octets: [127, 0, 0, 1], port: 0))
    let client = try UDPSocket(binding: UDPAddress(octets: [127, 0, 0, 1], port: 0))
    try client.send([UInt8](repeating: 7, count: 100), to: try #require(server.boundAddress))
    _ = try Poller.wait(for: [server.descriptor.rawValue], timeout: .seconds(5))
    let got = try #require(try server.receive(maxLength: 10))
    #expect(got.bytes == [UInt8](repeating: 7, count: 10) && got.truncated)
  }

  @Test func bindingAnAddressInUseFailsWithItsErrno() throws {
    let first = try UDPSocket(binding: UDPAddress(octets: [127, 0, 0, 1], port: 0))
    let taken = try #require(first.boundAddress)
    #expect(throws: SystemError.self) { try UDPSocket(binding: taken) }
  }
}
