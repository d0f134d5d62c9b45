import Foundation
import OTALink
import OTASystem
import Testing

@testable import OTASocketLink

/// The central's end of the simulated link paces by the air model: whole packets per connection
/// event, a write delivered when its last packet has gone, the device's answers on the air too.
/// Both ends in one process; the test passes the time.
@Suite struct SocketCentralAirTests {
  static let info = Array(repeating: UInt8(0x5A), count: 70)

  struct Pair {
    let peripheral: SocketPeripheral
    let central: SocketCentral

    init(_ spec: String) throws {
      let conditions = try LinkConditions(spec: spec)
      let path = FileManager.default.temporaryDirectory.appendingPathComponent(
        "air-\(UUID().uuidString).sock")
      peripheral = try SocketPeripheral(path: path.path, conditions: conditions, limits: .init())
      central = SocketCentral(path: path.path, conditions: conditions)
    }

    /// Device events until one turn brings none (each turn waits up to 50 ms for bytes).
    func device(now: Duration) throws -> [PeripheralEvent] {
      var all: [PeripheralEvent] = []
      while true {
        let ready = try Poller.wait(
          for: peripheral.descriptors, writable: peripheral.writeDescriptors, timeout: .milliseconds(50))
        let events = try peripheral.service(readable: ready, now: now) { _, _ in SocketCentralAirTests.info }
        if events.isEmpty && ready.isEmpty { return all }
        all += events
      }
    }

    /// One turn of the central at `now`, after whatever the device sent has arrived.
    func central(now: Duration) throws -> [CentralEvent] {
      let ready = try Poller.wait(for: central.descriptors, timeout: .milliseconds(50))
      return central.service(readable: ready, now: now)
    }

    /// Connects at time zero (the first connection event is then, with nothing to send).
    func connect() throws {
      central.connect(now: .zero)
      _ = try device(now: .zero)
      let events = try central(now: .zero)
      #expect(events.contains(.connected(mtu: 517)), "\(events)")
    }
  }

  static func dataWrites(_ events: [PeripheralEvent]) -> [Int] {
    events.compactMap { if case .dataWrite(let bytes) = $0 { bytes.count } else { nil } }
  }

  @Test func writesCrossWholePacketsPerEvent() throws {
    // 2M, DLE, 7.5 ms: 5 packets per event. A 495-byte write is 2 packets: 2 writes cross in the
    // first event and half the third; the second event ends it and carries 2 more (10 packets).
    let pair = try Pair("mtu=517,interval=7.5ms,packets=1000,queue=100")
    try pair.connect()
    for _ in 0..<20 { pair.central.writeData(Array(repeating: 0xAB, count: 495)) }
    let first = try pair.central(now: .microseconds(7500))
    #expect(
      first.contains(.writable(100 - 17 - 1)), "17 wait; the half-sent third write still holds its place")
    #expect(Self.dataWrites(try pair.device(now: .microseconds(7500))) == [495, 495])
    let second = try pair.central(now: .milliseconds(15))
    #expect(second.contains(.writable(100 - 15)), "5 writes gone")
    #expect(Self.dataWrites(try pair.device(now: .milliseconds(15))) == [495, 495, 495])
  }

  @Test func theControllersPacketLimitBindsBeforeTheAir() throws {
    let pair = try Pair("mtu=517,interval=7.5ms,packets=3,queue=100")
    try pair.connect()
    for _ in 0..<10 { pair.central.writeData(Array(repeating: 1, count: 244)) }
    _ = try pair.central(now: .microseconds(7500))
    #expect(Self.dataWrites(try pair.device(now: .microseconds(7500))) == [244, 244, 244])
  }

  @Test func notificationsTakeTheirPlaceOnTheAir() throws {
    // A 5-packet event (7.5 ms) of 244-byte writes, and a notification of 244 bytes from the
    // device: it rides in the peripheral's packet of the first exchange (1048 + 150 + 1048 µs
    // instead of 1048 + 150 + 44), so the event carries 4 writes, not 5: 2246 + 3 × 1392 = 6422,
    // a fourth 1392 would end at 7814.
    let pair = try Pair("mtu=517,interval=7.5ms,packets=1000,queue=100")
    try pair.connect()
    pair.peripheral.notify(Array(repeating: 7, count: 244))
    for _ in 0..<20 { pair.central.writeData(Array(repeating: 1, count: 244)) }
    let events = try pair.central(now: .microseconds(7500))
    #expect(events.contains(.notification(Array(repeating: 7, count: 244))))
    #expect(Self.dataWrites(try pair.device(now: .microseconds(7500))).count == 4)
  }
}
