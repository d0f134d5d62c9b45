import OTABoot
import OTACBOR
import OTAEngine
import OTAReceiverHost
import OTASMP
import OTASMPServer
import OTATrust
import OTAWire
import Testing

/// The device's SMP answers where Zephyr's img_mgmt decides them: an upload a restart cut, the first
/// chunk's checks in img_mgmt_upload_inspect's order, the `sha` checked and `match` answered, the
/// slot flags a swap device shows, state writes and erase. Each answer is Zephyr's for the same state.
@Suite struct SMPZephyrDeviceTests {
  typealias Client = SMPDeviceTests.Client
  static let v1 = Version(major: 1, minor: 0, revision: 0)
  static let v3 = Version(major: 3, minor: 0, revision: 0)

  /// The file's SHA-256, as a client computes it for `sha` (SourceDigest is checked against
  /// swift-crypto's one-shot SHA-256 in OTATrustTests).
  static func sha256(_ bytes: [UInt8]) -> [UInt8] {
    struct Bytes: ImageSource {
      let bytes: [UInt8]
      var capacity: UInt64 { UInt64(bytes.count) }
      func read(at offset: UInt64, count: Int) -> [UInt8] { Array(bytes[Int(offset)..<Int(offset) + count]) }
    }
    return SourceDigest.sha256(of: Bytes(bytes: bytes), length: UInt64(bytes.count))
  }

  static func err(_ rc: UInt64) -> CBOR {
    .textMap(["err": .textMap(["group": .unsigned(1), "rc": .unsigned(rc)])])
  }

  static func chunk(
    _ client: inout Client, off: Int, data: ArraySlice<UInt8>, len: Int? = nil, sha: [UInt8]? = nil
  ) -> [UInt8] {
    var entries = [
      CBOR.Entry(.text("off"), .unsigned(UInt64(off))), CBOR.Entry(.text("data"), .bytes(Array(data))),
    ]
    if let len { entries.append(CBOR.Entry(.text("len"), .unsigned(UInt64(len)))) }
    if let sha { entries.append(CBOR.Entry(.text("sha"), .bytes(sha))) }
    return client.message(.write, group: 1, command: 1, .map(entries))
  }

  @Test func aChunkPastZeroOnAFreshDeviceIsToldZero() throws {
    // [S-UP-7]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let image = try SMPDeviceTests.image()
    // Zephyr after a reset: nothing in progress, the offset it expects is 0 (no rc).
    let answer = try client.body(
      try device.handle(Self.chunk(&client, off: 4000, data: image[4000..<5000]), host: &host))
    #expect(answer == .textMap(["off": .unsigned(0)]))
    #expect(host.engine.phase == .idle)
    #expect(fixture.runningSlotUntouched)
  }

  @Test func anUploadCutByARestartGoesOnFromTheCommittedOffsetItIsTold() throws {
    // [S-UP-7]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let image = try SMPDeviceTests.image()
    let sha = Self.sha256(image)
    // 6000 bytes in 1000-byte chunks: committed at 5000, 6000 acknowledged to the client.
    _ = try SMPDeviceTests.upload(
      image, device: &device, host: &host, client: &client, until: 6000, sha: sha)
    // otad is killed -9 and started again; the client goes on where it was, at 6000, without a first chunk.
    fixture.medium.reboot(seed: nil)
    host = try fixture.makeHost()
    device = SMPDevice()
    let told = try client.body(
      try device.handle(Self.chunk(&client, off: 6000, data: image[6000..<7000]), host: &host))
    #expect(told == .textMap(["off": .unsigned(5000)]))
    // It carries on from there, and the whole image arrives and checks out (the journaled sha: match).
    let last = try SMPDeviceTests.upload(image, from: 5000, device: &device, host: &host, client: &client)
    #expect(last == .textMap(["off": .unsigned(UInt64(image.count)), "match": .bool(true)]))
    #expect(try SMPDeviceTests.states(&device, &host, &client).count == 2)

    // A chunk below the committed offset of a journaled upload is told 0 (it continues nothing known).
    _ = try SMPDeviceTests.upload(image, device: &device, host: &host, client: &client, until: 6000, sha: sha)
    fixture.medium.reboot(seed: nil)
    host = try fixture.makeHost()
    device = SMPDevice()
    let below = try client.body(
      try device.handle(Self.chunk(&client, off: 1000, data: image[1000..<2000]), host: &host))
    #expect(below == .textMap(["off": .unsigned(0)]))
  }

  @Test func aWholeShaIsCheckedAndMatchAnsweredWithTheLastChunk() throws {
    // [S-UP-8]
    let image = try SMPDeviceTests.image()
    let right = Self.sha256(image)
    var wrong = right
    wrong[31] ^= 0xFF
    for (sha, expected) in [(right, CBOR.bool(true)), (wrong, .bool(false)), ([1, 2, 3, 4], nil)] {
      let fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
      var host = try fixture.makeHost()
      var device = SMPDevice()
      var client = Client()
      let last = try SMPDeviceTests.upload(image, device: &device, host: &host, client: &client, sha: sha)
      #expect(last["off"] == .unsigned(UInt64(image.count)))
      // A shorter sha is a resume key only: no "match" (Zephyr compares only a whole SHA-256).
      #expect(last["match"] == expected, "\(sha.count)-byte sha")
    }
    // A sha longer than SHA-256's 32 bytes: IMG_MGMT_ERR_INVALID_HASH (24).
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let long = try client.body(
      try device.handle(
        Self.chunk(&client, off: 0, data: image[0..<1000], len: image.count, sha: right + [0]), host: &host))
    #expect(long == Self.err(24))
    #expect(host.engine.phase == .idle)
  }

  @Test func theFirstChunkIsCheckedInZephyrsOrder() throws {
    // [S-UP-1]
    var fixture = DeviceFixture(slotCapacity: 16 * 1024)
    fixture.policy = ImagePolicy()
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let image = try SMPDeviceTests.image()
    let header = image[0..<1000]
    func first(_ data: ArraySlice<UInt8>, len: Int?) throws -> CBOR {
      try client.body(try device.handle(Self.chunk(&client, off: 0, data: data, len: len), host: &host))
    }
    // Fewer bytes than a header: 22, before the missing "len" (21), before the magic (23).
    #expect(try first(header.prefix(31), len: nil) == Self.err(22))
    #expect(try first(header, len: nil) == Self.err(21))
    #expect(try first(ArraySlice([UInt8](repeating: 0, count: 64)), len: nil) == Self.err(21))
    #expect(try first(ArraySlice([UInt8](repeating: 0, count: 64)), len: 64) == Self.err(23))
    // Larger than the slot: 30; in version 1, Zephyr's translation: 1 (not 7).
    #expect(try first(header, len: 16 * 1024 + 1) == Self.err(30))
    client.version = 0
    #expect(try first(header, len: 16 * 1024 + 1) == .textMap(["rc": .unsigned(1)]))
    #expect(host.engine.phase == .idle)

    // Upgrade only, the same version as the running one: 27, in version 1 6 (not 11).
    let same = try MCUbootImageBuilder(version: Self.v1, headerSize: 0x20).build(payload: [1, 2, 3])
    let upgrade = client.message(
      .write, group: 1, command: 1,
      .textMap([
        "off": .unsigned(0), "len": .unsigned(UInt64(same.count)), "data": .bytes(same),
        "upgrade": .bool(true),
      ]))
    #expect(try client.body(try device.handle(upgrade, host: &host)) == .textMap(["rc": .unsigned(6)]))
  }

  @Test func dataPastTheAnnouncedLengthIsADataOverrun() throws {
    // [S-UP-5]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let image = try SMPDeviceTests.image()
    _ = try client.body(
      try device.handle(Self.chunk(&client, off: 0, data: image[0..<1000], len: 1500, sha: [9]), host: &host))
    let over = try client.body(
      try device.handle(Self.chunk(&client, off: 1000, data: image[1000..<2000]), host: &host))
    #expect(over == Self.err(31))
  }

  /// A device whose slot A runs an MCUboot image 1.0.0, so that slot 1 shows during a trial of B.
  static func mcubootDevice() throws -> DeviceFixture {
    let running = try MCUbootImageBuilder(version: v1, headerSize: 0x20).build(
      payload: DeviceFixture.image(size: 2000, seed: 3))
    return DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096, runningImage: running)
  }

  static func stateWrite(
    _ device: inout SMPDevice, _ host: inout ReceiverHost, _ client: inout Client, hash: [UInt8]?,
    confirm: Bool
  ) throws -> CBOR {
    var entries = [CBOR.Entry(.text("confirm"), .bool(confirm))]
    if let hash { entries.append(CBOR.Entry(.text("hash"), .bytes(hash))) }
    return try client.body(
      try device.handle(client.message(.write, group: 1, command: 0, .map(entries)), host: &host))
  }

  static func flags(_ image: CBOR?) -> [String] {
    ["pending", "confirmed", "active", "permanent"].filter { image?[$0] == .bool(true) }
  }

  @Test func duringATrialTheOldImageShowsConfirmedOnlyAndTestsArePending() throws {
    // [S-CMD-6] [S-STATE-1] [S-CMD-7] [S-STATE-2]
    let fixture = try Self.mcubootDevice()
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    _ = try SMPDeviceTests.upload(try SMPDeviceTests.image(), device: &device, host: &host, client: &client)
    var states = try SMPDeviceTests.states(&device, &host, &client)
    let old = try #require(states.first?["hash"]?.bytesValue)
    let new = try #require(states.last?["hash"]?.bytesValue)
    #expect(Self.flags(states.first) == ["confirmed", "active"] && Self.flags(states.last) == [])
    // A test without a hash is IMG_MGMT_ERR_INVALID_HASH (24); of the running image 33.
    #expect(try Self.stateWrite(&device, &host, &client, hash: nil, confirm: false) == Self.err(24))
    #expect(try Self.stateWrite(&device, &host, &client, hash: old, confirm: false) == Self.err(33))

    // Test armed (swap type "test"): slot 1 pending; testing it again answers the state; confirming
    // either image now is "already pending" (28).
    _ = try Self.stateWrite(&device, &host, &client, hash: new, confirm: false)
    states = try SMPDeviceTests.states(&device, &host, &client)
    #expect(Self.flags(states.first) == ["confirmed", "active"] && Self.flags(states.last) == ["pending"])
    #expect(try Self.stateWrite(&device, &host, &client, hash: new, confirm: false)["images"] != nil)
    #expect(try Self.stateWrite(&device, &host, &client, hash: new, confirm: true) == Self.err(28))
    #expect(try Self.stateWrite(&device, &host, &client, hash: nil, confirm: true) == Self.err(28))

    // The trial runs (swap type "revert"): the new image active, not confirmed; the old one confirmed
    // only: not pending, not permanent (what Zephyr shows, and what otad showed wrongly before).
    #expect(try device.handle(client.message(.write, group: 0, command: 5, .map([])), host: &host).restart)
    host = try fixture.boot(verdict: .silent)
    states = try SMPDeviceTests.states(&device, &host, &client)
    #expect(states.first?["hash"] == .bytes(new) && Self.flags(states.first) == ["active"])
    #expect(states.last?["hash"] == .bytes(old) && Self.flags(states.last) == ["confirmed"])
    // Testing the old image is "already pending"; confirming it is already so (the revert target).
    #expect(try Self.stateWrite(&device, &host, &client, hash: old, confirm: false) == Self.err(28))
    #expect(try Self.stateWrite(&device, &host, &client, hash: old, confirm: true)["images"] != nil)
    #expect(host.runningOnTrial)
    // Erase of the slot the trial reverts to: "no free slot" (9); of a slot the device lacks: 14.
    let erase = client.message(.write, group: 1, command: 5, .map([]))
    #expect(try client.body(try device.handle(erase, host: &host)) == Self.err(9))
    let slot2 = client.message(.write, group: 1, command: 5, .textMap(["slot": .unsigned(2)]))
    #expect(try client.body(try device.handle(slot2, host: &host)) == Self.err(14))
    // Confirming the running image ends the trial: both confirmed-and-active / nothing.
    _ = try Self.stateWrite(&device, &host, &client, hash: nil, confirm: true)
    states = try SMPDeviceTests.states(&device, &host, &client)
    #expect(Self.flags(states.first) == ["confirmed", "active"] && Self.flags(states.last) == [])
  }

  @Test func aPermanentSwitchShowsPendingPermanentAndRefusesATest() throws {
    // [S-CMD-6] [S-STATE-1] [S-CMD-7] [S-STATE-2]
    let fixture = try Self.mcubootDevice()
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    _ = try SMPDeviceTests.upload(try SMPDeviceTests.image(), device: &device, host: &host, client: &client)
    let new = try #require(try SMPDeviceTests.states(&device, &host, &client).last?["hash"]?.bytesValue)
    _ = try Self.stateWrite(&device, &host, &client, hash: new, confirm: true)
    let states = try SMPDeviceTests.states(&device, &host, &client)
    // Swap type "perm": the running image stays confirmed and active (Zephyr), slot 1 pending and permanent.
    #expect(Self.flags(states.first) == ["confirmed", "active"])
    #expect(Self.flags(states.last) == ["pending", "permanent"])
    #expect(try Self.stateWrite(&device, &host, &client, hash: new, confirm: true)["images"] != nil)
    #expect(try Self.stateWrite(&device, &host, &client, hash: new, confirm: false) == Self.err(28))
    #expect(try Self.stateWrite(&device, &host, &client, hash: nil, confirm: true) == Self.err(28))
  }

  @Test func aChunkAtAnotherOffsetIsNotWrittenAndToldWhereTheDeviceIs() throws {
    // [S-UP-4]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let image = try SMPDeviceTests.image()
    _ = try SMPDeviceTests.upload(image, device: &device, host: &host, client: &client, until: 2000)
    let ahead = try client.body(
      try device.handle(Self.chunk(&client, off: 5000, data: image[5000..<6000]), host: &host))
    let behind = try client.body(
      try device.handle(Self.chunk(&client, off: 1000, data: image[1000..<2000]), host: &host))
    #expect(ahead == .textMap(["off": .unsigned(2000)]) && behind == .textMap(["off": .unsigned(2000)]))
    #expect(fixture.medium.slotBytes(.b)[5000..<6000].allSatisfy { $0 == 0 })
  }

  @Test func afterAnOTATakeoverTheSMPClientsNextChunkIsToldZero() throws {
    // [S-ONE-3]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let image = try SMPDeviceTests.image()
    _ = try SMPDeviceTests.upload(image, device: &device, host: &host, client: &client, until: 3000)
    // An OTA central's PREPARE replaces the half-done upload (nobody holds the device: no chunk came
    // in the last 30 s of the loop's clock, which this test leaves at 0 for SMP).
    _ = try host.handle(.connected(mtu: 247))
    let prepare = Request.prepare(size: 5000, crc32: 0x1234_5678, version: SMPDeviceTests.v2)
    let answers = try host.handle(.control(prepare.encoded, now: .seconds(100))).compactMap { output in
      if case .notify(let bytes) = output { try? Response(bytes: bytes) } else { nil }
    }
    #expect(answers.map(\.status) == [.success])
    // While the OTA central's session holds the device, SMP is told busy...
    let busy = try client.body(
      try device.handle(Self.chunk(&client, off: 3000, data: image[3000..<4000]), host: &host))
    #expect(busy == .textMap(["rc": .unsigned(10)]))
    // ... and once it has gone, the upload it replaced is no more: off 0.
    _ = try host.handle(.disconnected)
    let next = try client.body(
      try device.handle(Self.chunk(&client, off: 3000, data: image[3000..<4000]), host: &host))
    #expect(next == .textMap(["off": .unsigned(0)]))
    // The OTA transfer is untouched: still its journal (CRC32 0x12345678), nothing of the SMP chunk.
    #expect(host.engine.transfer?.crc32 == 0x1234_5678)
  }
}
