import OTALink
import OTASystem
import Testing

@testable import OTASocketLink

/// docs/PROTOCOL.md, "Timing": the simulated link's own limits as otad runs it (its defaults), the
/// ones a central's reconnect schedule has to outlast.
extension SocketPeripheralTests {
  @Test func byDefaultASilentConnectionHoldsTheDevice3sAndASilentCentral30s() throws {
    // [P-TIME-12] [P-SESS-3] [SEC-LIMIT-4]
    let peripheral = try makePeripheral()
    let silent = try UnixSocket.connect(to: peripheral.path)
    #expect(try turn(peripheral, now: .zero).isEmpty)
    #expect(peripheral.nextDeadline == .seconds(3), "no hello yet: 3 s")
    let other = try UnixSocket.connect(to: peripheral.path)
    #expect(try turn(peripheral, now: .seconds(1)).isEmpty)
    #expect(try frames(on: other) == [.busy], "one central at a time: the others are told busy")
    try silent.send(.hello(mtu: 247))
    #expect(try turn(peripheral, now: .seconds(2)) == [.connected(mtu: 247)])
    #expect(peripheral.nextDeadline == .seconds(32), "after its hello: 30 s of silence")
  }
}
