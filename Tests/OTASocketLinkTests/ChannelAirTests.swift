import Foundation
import OTALink
import OTASystem
import Testing

@testable import OTASocketLink

/// The L2CAP channel's shape on the simulated air (`ChannelShape`): SDUs cut into K-frames of the
/// MPS, K-frames into link-layer packets, one credit per K-frame, credits returned by the receiver
/// from the next connection event on.
@Suite struct ChannelAirTests {
  static func air(_ spec: String) throws -> AirTime { AirTime(try LinkConditions(spec: spec)) }

  @Test func anSDUIsCutIntoKFramesOfTheMPS() throws {
    let dle = try Self.air("coc=4100")
    let shape = try #require(dle.conditions.channel)
    // MPS 247 (251 less the basic header): 4100 + 2 bytes are 16 full K-frames and 150 bytes.
    #expect(dle.channelMPS(shape) == 247 && dle.channelCredits(shape) == 17)
    #expect(dle.kFrames(sduLength: 4100, shape) == Array(repeating: 251, count: 16) + [154])
    // Without Data Length Extension the MPS is 23: 179 K-frames of one 27-byte packet each.
    let short = try Self.air("coc=4100,dle=off")
    #expect(short.kFrames(sduLength: 4100, shape).count == 179)
    #expect(short.kFrames(sduLength: 4100, shape).allSatisfy { $0 <= 27 })
    let custom = try Self.air("coc=672,mps=100,credits=3")
    #expect(custom.conditions.channel == ChannelShape(sdu: 672, mps: 100, credits: 3))
    #expect(
      custom.kFrames(sduLength: 672, try #require(custom.conditions.channel)) == Array(
        repeating: 104, count: 6) + [78])
  }

  @Test func theLinkSyntaxRoundTripsTheChannel() throws {
    let conditions = try LinkConditions(spec: "mtu=517,coc=4100,credits=40")
    #expect("\(conditions)".contains("coc=4100,credits=40"))
    #expect(try LinkConditions(spec: "\(conditions)") == conditions)
    #expect(try LinkConditions(spec: "coc=4100,coc=off").channel == nil)
    #expect(throws: LinkSpecError.self) { try LinkConditions(spec: "coc=22") }
  }

  /// One credit: one K-frame, then its credit comes back in the next event. A 4100-byte SDU's 17
  /// K-frames take 17 events, whatever the air could carry.
  @Test func oneCreditCarriesOneKFramePerEvent() throws {
    let air = try Self.air("interval=15ms,packets=1000,coc=4100,credits=1")
    let shape = try #require(air.conditions.channel)
    let measured = air.channelBytesPerSecond(sduLength: 4100, shape, packetLimit: nil)
    let expected = 4100 / (17 * 0.015)
    #expect(abs(measured - expected) / expected < 0.02, "\(measured) B/s, expected \(expected)")
  }

  /// Linux's credits (one SDU's worth) stall the sender until the next event after each SDU; ample
  /// credits do not. With ample credits the channel and whole-packet ATT writes carry nearly the
  /// same on the same air: both fill 251-byte packets.
  @Test func linuxsCreditsCostAirTimeThatAmpleCreditsDoNot() throws {
    for phy in ["1M", "2M"] {
      let linux = try Self.air("phy=\(phy),interval=15ms,coc=4100")
      let ample = try Self.air("phy=\(phy),interval=15ms,coc=4100,credits=1000")
      let shape = try #require(linux.conditions.channel)
      let stalled = linux.channelBytesPerSecond(sduLength: 4100, shape, packetLimit: nil)
      let free = ample.channelBytesPerSecond(
        sduLength: 4100, try #require(ample.conditions.channel), packetLimit: nil)
      #expect(stalled < free * 0.97, "\(phy): \(stalled) vs \(free)")
      let gatt = linux.valueBytesPerSecond(valueLength: 495, packetLimit: nil)
      // Image bytes: 4096 of 4100 per SDU, 491 of 495 per write.
      let channelImage = free * 4096 / 4100
      let gattImage = gatt * 491 / 495
      #expect(abs(channelImage - gattImage) / gattImage < 0.05, "\(phy): \(channelImage) vs \(gattImage)")
    }
  }

  // MARK: The simulated link

  /// Device events until one turn brings none.
  static func deviceWrites(_ pair: SocketCentralAirTests.Pair, now: Duration) throws -> [Int] {
    SocketCentralAirTests.dataWrites(try pair.device(now: now))
  }

  /// The event (7.5 ms each) at which each of `count` SDUs of 4100 bytes reaches the device.
  static func arrivals(_ spec: String, count: Int) throws -> [Int] {
    let pair = try SocketCentralAirTests.Pair(spec)
    try pair.connect()
    pair.central.readInfo()
    var opened: [CentralEvent] = []
    var event = 0
    while opened.isEmpty || !opened.contains(where: { if case .info = $0 { true } else { false } }) {
      event += 1
      _ = try pair.device(now: .microseconds(7500 * event))
      opened += try pair.central(now: .microseconds(7500 * event))
    }
    let info = try #require(opened.firstIndex { if case .info = $0 { true } else { false } })
    let channel = try #require(opened.firstIndex { if case .dataChannelOpened = $0 { true } else { false } })
    #expect(channel < info, "the channel opens before Info is handed on: the sender sizes chunks by it")
    for _ in 0..<count { pair.central.writeData(Array(repeating: 0xC5, count: 4100)) }
    var arrived: [Int] = []
    let start = event
    while arrived.count < count, event < start + 200 {
      event += 1
      _ = try pair.central(now: .microseconds(7500 * event))
      for write in try Self.deviceWrites(pair, now: .microseconds(7500 * event)) {
        #expect(write == 4100, "one SDU is one data write")
        arrived.append(event - start)
      }
    }
    return arrived
  }

  @Test func theSimulatedChannelCarriesSDUsUnderItsCredits() throws {
    // 2M, 7.5 ms: 5 exchanges of a 251-byte packet per event; an SDU is 17 K-frames.
    let ample = try Self.arrivals(
      "mtu=517,interval=7.5ms,packets=1000,queue=100,coc=4100,credits=100", count: 2)
    #expect(ample == [4, 7], "17 K-frames: 4 events, then 17 more from the 3 left in event 4")
    let linux = try Self.arrivals("mtu=517,interval=7.5ms,packets=1000,queue=100,coc=4100", count: 2)
    #expect(linux.first == 4)
    #expect(linux[1] > ample[1], "the second SDU waits for the credits of the first: \(linux)")
  }
}
