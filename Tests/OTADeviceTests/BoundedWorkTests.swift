import OTACBOR
import OTAEngine
import OTAReceiverHost
import OTASMP
import OTASMPServer
import OTATrust
import OTAWire
import Testing

/// Bounded work per request: the slots' image hashes are computed once per state of a slot, OS and
/// bootloader info hash nothing, and slot hashing (state reads after a change, BLOCK HASHES) is
/// charged to each client's budget, with a busy answer past it.
@Suite struct BoundedWorkTests {
  /// A device whose running image (slot A) is an MCUboot image of 40 KiB: hashing it costs.
  static func fixture() throws -> DeviceFixture {
    let running = try MCUbootImageBuilder(version: DeviceFixture.runningVersion, headerSize: 0x20).build(
      payload: DeviceFixture.image(size: 40 * 1024, seed: 0xB0B), signingKey: nil)
    return DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096, runningImage: running)
  }

  @Test func aFloodOfStateReadsHashesEachSlotOncePerState() throws {
    // [S-ONE-6] [SEC-LIMIT-6] [SEC-ATK-34]
    let fixture = try Self.fixture()
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = SMPDeviceTests.Client()
    let read = client.message(.read, group: 1, command: 0, .map([]))
    var answers: Set<[UInt8]> = []
    for _ in 0..<200 {
      answers.insert(try #require(try device.handle(read, host: &host).response).dropFirst(8).map { $0 })
    }
    #expect(answers.count == 1, "every read answers the same state")
    #expect(host.imageHashBytesRead == UInt64(fixture.runningImage.count), "the running image hashed once")
    // OS info and bootloader info read no slot at all.
    for command: UInt8 in [7, 8] {
      _ = try device.handle(client.message(.read, group: 0, command: command, .map([])), host: &host)
    }
    #expect(host.imageHashBytesRead == UInt64(fixture.runningImage.count))
    // An upload changes slot B: once validated, it is hashed once more, and then no more.
    let image = try SMPDeviceTests.image()
    _ = try SMPDeviceTests.upload(image, device: &device, host: &host, client: &client)
    let afterUpload = host.imageHashBytesRead
    for _ in 0..<50 { _ = try device.handle(read, host: &host) }
    #expect(host.imageHashBytesRead == afterUpload + UInt64(image.count))
  }

  @Test func aClientPastItsBudgetIsToldBusyUntilItRefills() throws {
    // [S-ERR-9] [SEC-LIMIT-6] [SEC-ATK-34]
    let fixture = try Self.fixture()
    var host = try fixture.makeHost()
    // A budget smaller than one hash of the running image, refilling 1 KiB a second.
    host.workBudget = WorkBudget(rate: 1024, burst: 1024, sharedFactor: 100)
    var device = SMPDevice()
    var client = SMPDeviceTests.Client()
    func stateRead() throws -> CBOR {
      try client.body(
        try device.handle(
          client.message(.read, group: 1, command: 0, .map([])), host: &host, client: "10.0.0.9:1337"))
    }
    #expect(try stateRead()["images"] != nil, "the first read is admitted, and overdraws")
    #expect(try stateRead() == .textMap(["rc": .unsigned(10)]))
    // Another client has a budget of its own (and the state is cached: it costs it nothing).
    let other = try client.body(
      try device.handle(
        client.message(.read, group: 1, command: 0, .map([])), host: &host, client: "10.0.0.8:1337"))
    #expect(other["images"] != nil)
    // Echo is no slot hashing: never refused for the budget.
    let echo = try client.body(
      try device.handle(
        client.message(.write, group: 0, command: 0, .textMap(["d": .text("x")])), host: &host,
        client: "10.0.0.9:1337"))
    #expect(echo == .textMap(["r": .text("x")]))
    // 40 s later its debt is paid.
    host.advance(to: .seconds(41))
    #expect(try stateRead()["images"] != nil)
  }

  @Test func blockHashesPastTheBudgetAreAnsweredBusy() throws {
    // [P-BH-10] [SEC-CHECK-7]
    let fixture = try Self.fixture()
    var host = try fixture.makeHost()
    host.workBudget = WorkBudget(rate: 4096, burst: 8192, sharedFactor: 100)
    _ = try host.handle(.connected(mtu: ATTMTU(247)))
    var features: [UInt8] = []
    Request.features(.all).append(to: &features)
    _ = try host.handle(.control(features, now: .zero))
    func blockHashes(at now: Duration) throws -> Response? {
      var request: [UInt8] = []
      Request.blockHashes(BlockHashRequest(blockSize: 4096, firstBlock: 0, maxCount: 4)).append(to: &request)
      return try host.handle(.control(request, now: now)).compactMap { output -> Response? in
        if case .notify(let bytes) = output { try? Response(bytes: bytes) } else { nil }
      }.first
    }
    #expect(try blockHashes(at: .seconds(1))?.status == .success)  // 16 KiB read: in debt
    #expect(try blockHashes(at: .seconds(1))?.status == .busy)
    #expect(try blockHashes(at: .seconds(2))?.status == .busy, "4 KiB regained, still 4 KiB in debt")
    #expect(try blockHashes(at: .seconds(3))?.status == .success)
  }

  @Test func theBudgetKeepsClientsApartAndBoundsThemAllTogether() {
    // [SEC-CHECK-7]
    var budget = WorkBudget(rate: 100, burst: 1000, sharedFactor: 2, maxClients: 3)
    #expect(budget.admits("a", now: .zero))
    budget.charge("a", bytes: 1500, now: .zero)
    #expect(!budget.admits("a", now: .zero))
    #expect(budget.admits("b", now: .zero), "b has a budget of its own")
    budget.charge("b", bytes: 600, now: .zero)
    // Together 2100 of 2000: nobody more until the shared bucket refills, whoever asks.
    #expect(!budget.admits("c", now: .zero))
    #expect(budget.admits("c", now: .seconds(1)), "the shared bucket regains 200 a second")
    #expect(!budget.admits("a", now: .seconds(1)), "a is still 400 in debt")
    #expect(budget.admits("a", now: .seconds(5)))
    // At most three clients are kept apart: the quietest is forgotten.
    budget.charge("c", bytes: 1, now: .seconds(6))
    budget.charge("d", bytes: 1, now: .seconds(7))
    #expect(budget.clientCount == 3)
  }
}
