import OTABoot
import OTACBOR
import OTAEngine
import OTAReceiverHost
import OTASMP
import OTASMPServer
import OTAStorage
import OTAStorageTesting
import OTATestSupport
import OTATrust
import OTAWire
import Testing

/// The SMP server on a device in memory: the same slots, journal, image checks and boot control as
/// the OTA protocol, driven by the messages an MCUmgr client sends.
@Suite struct SMPDeviceTests {
  static let v2 = Version(major: 2, minor: 0, revision: 0)
  static let payload = DeviceFixture.image(size: 9000, seed: 0x5A5)
  static let key = ImageSigningKey.generate(.ed25519)

  static func image(key: ImageSigningKey? = nil) throws -> [UInt8] {
    try MCUbootImageBuilder(version: v2, headerSize: 0x20).build(payload: payload, signingKey: key)
  }

  /// A client: numbers its requests, decodes the answers.
  struct Client {
    var sequence: UInt8 = 0
    var version: UInt8 = 1

    mutating func message(_ operation: SMPOperation, group: UInt16, command: UInt8, _ body: CBOR) -> [UInt8] {
      sequence &+= 1
      return SMPMessage.encoded(
        operation, version: version, group: group, command: command, sequence: sequence, body)
    }

    func body(_ output: SMPDevice.Output) throws -> CBOR {
      let response = try #require(output.response)
      let header = try SMPHeader(bytes: response)
      #expect(header.operation == .readResponse || header.operation == .writeResponse)
      return try CBORDecoder.decode(Array(response.dropFirst(SMPHeader.byteCount)))
    }

    mutating func upload(_ chunk: ArraySlice<UInt8>, at offset: Int, of image: [UInt8], sha: [UInt8]? = nil)
      -> [UInt8]
    {
      var entries: KeyValuePairs<String, CBOR> = [
        "off": .unsigned(UInt64(offset)), "data": .bytes(Array(chunk)),
      ]
      if offset == 0 {
        entries = [
          "image": .unsigned(0), "off": .unsigned(0), "len": .unsigned(UInt64(image.count)),
          "data": .bytes(Array(chunk)), "sha": .bytes(sha ?? [1, 2, 3, 4]),
        ]
      }
      return message(.write, group: 1, command: 1, .textMap(entries))
    }
  }

  /// Uploads `image` in `chunk`-byte pieces from `start`; returns the last answer.
  static func upload(
    _ image: [UInt8], chunk: Int = 1000, from start: Int = 0, device: inout SMPDevice,
    host: inout ReceiverHost,
    client: inout Client, until stop: Int? = nil, sha: [UInt8]? = nil
  ) throws -> CBOR {
    var offset = start
    var last = CBOR.null
    while offset < (stop ?? image.count) {
      let end = min(image.count, offset + chunk)
      last = try client.body(
        try device.handle(client.upload(image[offset..<end], at: offset, of: image, sha: sha), host: &host))
      guard let next = last["off"]?.unsignedValue else { return last }
      offset = Int(next)
    }
    return last
  }

  static func states(_ device: inout SMPDevice, _ host: inout ReceiverHost, _ client: inout Client) throws
    -> [CBOR]
  {
    let answer = try client.body(
      try device.handle(client.message(.read, group: 1, command: 0, .map([])), host: &host))
    guard case .array(let images) = answer["images"] else { return [] }
    return images
  }

  @Test func uploadTestResetAndConfirmMakeTheNewImageRunConfirmed() throws {
    // [S-CMD-2] [S-CMD-7] [S-STATE-2] [S-PHONE-1]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let image = try Self.image()
    let last = try Self.upload(image, device: &device, host: &host, client: &client)
    #expect(last["off"] == .unsigned(UInt64(image.count)))
    var states = try Self.states(&device, &host, &client)
    #expect(states.count == 2)
    let hash = try #require(states.last?["hash"]?.bytesValue)
    #expect(hash.count == 32)
    #expect(states.last?["version"] == .text("2.0.0") && states.last?["pending"] == .bool(false))
    #expect(fixture.runningSlotUntouched)

    // test: the image with this hash boots on the next reset, on trial
    let tested = try client.body(
      try device.handle(
        client.message(
          .write, group: 1, command: 0, .textMap(["hash": .bytes(hash), "confirm": .bool(false)])),
        host: &host))
    guard case .array(let afterTest) = tested["images"] else {
      Issue.record("state write answers the state: \(tested)")
      return
    }
    #expect(afterTest.last?["pending"] == .bool(true) && afterTest.last?["permanent"] == .bool(false))
    let reset = try device.handle(client.message(.write, group: 0, command: 5, .map([])), host: &host)
    #expect(reset.restart)
    #expect(try client.body(reset) == .map([]))

    // The restart: the boot stage starts the trial, nobody has decided yet.
    host = try fixture.boot(verdict: .silent)
    #expect(host.runningOnTrial && host.running == .b)
    states = try Self.states(&device, &host, &client)
    #expect(states.first?["version"] == .text("2.0.0") && states.first?["hash"] == .bytes(hash))
    #expect(states.first?["active"] == .bool(true) && states.first?["confirmed"] == .bool(false))

    let confirmed = try client.body(
      try device.handle(
        client.message(.write, group: 1, command: 0, .textMap(["confirm": .bool(true)])), host: &host))
    guard case .array(let final) = confirmed["images"] else {
      Issue.record("no state after confirm: \(confirmed)")
      return
    }
    #expect(final.first?["confirmed"] == .bool(true) && final.first?["active"] == .bool(true))
    #expect(!host.runningOnTrial && host.boot.confirmed == .b)
    // Slot A's bytes are no MCUboot image (the fixture's factory firmware is raw): nothing to show there.
    #expect(final.count == 1)
  }

  /// nRF Connect Device Manager's "confirm only": upload, state write confirm with the new image's
  /// hash (permanent), reset: the new image runs confirmed, with no trial.
  @Test func confirmOnlyMakesTheNewImagePermanentWithoutATrial() throws {
    // [S-CMD-7] [S-STATE-2] [S-PHONE-1]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    _ = try Self.upload(try Self.image(), device: &device, host: &host, client: &client)
    let hash = try #require(try Self.states(&device, &host, &client).last?["hash"]?.bytesValue)
    let answer = try client.body(
      try device.handle(
        client.message(
          .write, group: 1, command: 0, .textMap(["hash": .bytes(hash), "confirm": .bool(true)])),
        host: &host))
    guard case .array(let images) = answer["images"] else {
      Issue.record("no state: \(answer)")
      return
    }
    #expect(images.last?["pending"] == .bool(true) && images.last?["permanent"] == .bool(true))
    #expect(try device.handle(client.message(.write, group: 0, command: 5, .map([])), host: &host).restart)
    host = try fixture.boot(verdict: .silent)
    #expect(host.running == .b && !host.runningOnTrial && host.boot.confirmed == .b)
    let states = try Self.states(&device, &host, &client)
    #expect(states.first?["hash"] == .bytes(hash) && states.first?["confirmed"] == .bool(true))
  }

  /// "Test only": nobody confirms over SMP; otad's own trial decides (here its health check fails
  /// at every boot) and the failed image shows in slot 1, not bootable.
  @Test func testOnlyLeavesTheVerdictToTheTrialAndARollbackShows() throws {
    // [S-CMD-6] [S-STATE-1] [S-CMD-7] [S-STATE-2] [S-PHONE-1]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    _ = try Self.upload(try Self.image(), device: &device, host: &host, client: &client)
    let hash = try #require(try Self.states(&device, &host, &client).last?["hash"]?.bytesValue)
    _ = try device.handle(
      client.message(.write, group: 1, command: 0, .textMap(["hash": .bytes(hash)])), host: &host)
    #expect(try device.handle(client.message(.write, group: 0, command: 5, .map([])), host: &host).restart)
    host = try fixture.boot(verdict: .fails)
    #expect(host.running == .a && host.boot.confirmed == .a)
    let states = try Self.states(&device, &host, &client)
    #expect(states.first?["version"] == .text("1.0.0") && states.first?["active"] == .bool(true))
    #expect(states.last?["hash"] == .bytes(hash) && states.last?["bootable"] == .bool(false))
    #expect(states.last?["pending"] == .bool(false) && states.last?["active"] == .bool(false))
    // Testing it again is refused: it was marked bad.
    let again = try client.body(
      try device.handle(
        client.message(.write, group: 1, command: 0, .textMap(["hash": .bytes(hash)])), host: &host))
    #expect(again == .textMap(["err": .textMap(["group": .unsigned(1), "rc": .unsigned(32)])]))
  }

  @Test func anUploadResumesAfterARestartAtTheCommittedOffset() throws {
    // [S-UP-3] [S-UP-6] [S-ONE-4]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let image = try Self.image()
    let sha = [UInt8](repeating: 0xC5, count: 32)
    // 6000 bytes sent in 1000-byte chunks: committed at 5000 (the first chunk that fills a 4096-byte
    // window), the last 1000 not yet durable.
    var offset = 0
    while offset < 6000 {
      let end = offset + 1000
      let answer = try client.body(
        try device.handle(client.upload(image[offset..<end], at: offset, of: image, sha: sha), host: &host))
      offset = Int(try #require(answer["off"]?.unsignedValue))
    }
    // otad restarts (killed -9: the unsynced bytes are lost), a new client starts from 0 with the same sha.
    fixture.medium.reboot(seed: nil)
    host = try fixture.makeHost()
    device = SMPDevice()
    let resumed = try client.body(
      try device.handle(client.upload(image[0..<1000], at: 0, of: image, sha: sha), host: &host))
    #expect(resumed["off"] == .unsigned(5000))
    let last = try Self.upload(image, from: 5000, device: &device, host: &host, client: &client)
    #expect(last["off"] == .unsigned(UInt64(image.count)))
    #expect(try Self.states(&device, &host, &client).count == 2)

    // Another image (another sha) starts over.
    let fresh = try client.body(
      try device.handle(client.upload(image[0..<1000], at: 0, of: image, sha: [9]), host: &host))
    #expect(fresh["off"] == .unsigned(1000))
  }

  @Test func anUnsignedImageIsRefusedWhereKeysAreTrusted() throws {
    // [S-UP-9] [SEC-SMP-1]
    var fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    fixture.policy = ImagePolicy(trustedKeys: [Self.key.publicKey])
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let last = try Self.upload(try Self.image(), device: &device, host: &host, client: &client)
    // Version 2: the image group's "invalid TLV" (5); nothing in slot 1 to test.
    #expect(last == .textMap(["err": .textMap(["group": .unsigned(1), "rc": .unsigned(5)])]))
    #expect(try Self.states(&device, &host, &client).count == 1)
    #expect(host.engine.phase == .idle)

    let signed = try Self.image(key: Self.key)
    let accepted = try Self.upload(signed, device: &device, host: &host, client: &client)
    #expect(accepted["off"] == .unsigned(UInt64(signed.count)))
    #expect(try Self.states(&device, &host, &client).count == 2)
  }

  /// imgtool's encrypted sample, uploaded unchanged as smpmgr and mcumgr-toolkit upload it, to a
  /// device that holds its key: slot 1 shows the image's own (plaintext) hash, holds the plaintext,
  /// and a test, reset and confirm make it run confirmed. Without the key the upload is refused at
  /// its end, as an unsigned one is where keys are trusted, and nothing is pending.
  @Test func anEncryptedImageUploadsAndRunsDecryptedWithTheDevicesKey() throws {
    // [SEC-ENC-1] [S-UP-10]
    let image = try RepositoryRoot.bytes("Images/mcuboot-enc-p256-aes256-4099B.bin")
    let layout = try MCUbootImageLayout(parsing: image)
    var fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let refused = try Self.upload(image, device: &device, host: &host, client: &client)
    // No key: the first chunk is refused, nothing is written.
    #expect(
      refused == .textMap(["err": .textMap(["group": .unsigned(1), "rc": .unsigned(22)])]), "\(refused)")
    #expect(try Self.states(&device, &host, &client).count == 1)
    #expect(fixture.medium.slotBytes(.b).allSatisfy { $0 == 0 })

    fixture.policy.decryptionKey = try ImageDecryptionKey(
      pem: RepositoryRoot.text("Images/keys/test-device-ecdsa-p256.pem"))
    host = try fixture.makeHost()
    device = SMPDevice()
    let last = try Self.upload(image, device: &device, host: &host, client: &client)
    #expect(last["off"] == .unsigned(UInt64(image.count)))
    let states = try Self.states(&device, &host, &client)
    let hash = try #require(states.last?["hash"]?.bytesValue)
    #expect(hash == layout.unprotectedArea.values(of: .sha256).first, "the image's hash, of its plaintext")
    let start = Int(layout.header.headerSize)
    let payload = try RepositoryRoot.bytes("Images/raw-4099B.bin")
    #expect(Array(fixture.medium.slotBytes(.b)[start..<start + payload.count]) == payload)
    _ = try device.handle(
      client.message(
        .write, group: 1, command: 0, .textMap(["hash": .bytes(hash), "confirm": .bool(false)])),
      host: &host)
    #expect(try device.handle(client.message(.write, group: 0, command: 5, .map([])), host: &host).restart)
    host = try fixture.boot(verdict: .passes)
    #expect(host.running == .b && host.boot.confirmed == .b && host.boot[.b].version.major == 1)
  }

  @Test func anUploadThatIsNoMCUbootImageIsRefusedAtItsFirstChunk() throws {
    // [S-UP-1] [S-ERR-1] [SEC-SMP-3]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let raw = DeviceFixture.image(size: 3000, seed: 7)
    let answer = try client.body(try device.handle(client.upload(raw[0..<1000], at: 0, of: raw), host: &host))
    #expect(answer == .textMap(["err": .textMap(["group": .unsigned(1), "rc": .unsigned(23)])]))
    // Version 1 hears what Zephyr translates "invalid image header magic" to: "unknown" (1).
    client.version = 0
    let v1 = try client.body(try device.handle(client.upload(raw[0..<1000], at: 0, of: raw), host: &host))
    #expect(v1 == .textMap(["rc": .unsigned(1)]))
    #expect(host.engine.phase == .idle)
  }

  @Test func nothingChangesWhileAnOTATransferIsUnderWay() throws {
    // [S-ERR-8] [S-ONE-1] [SEC-CHECK-5] [SEC-SMP-6]
    // [P-SESS-5]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    let image = try Self.image()
    // An OTA central prepares a transfer: its session holds the device.
    var prepare: [UInt8] = []
    Request.prepare(size: 5000, crc32: 1, version: Self.v2).append(to: &prepare)
    _ = try host.handle(.connected(mtu: ATTMTU(247)))
    _ = try host.handle(.control(prepare, now: .seconds(1)))
    host.advance(to: .seconds(2))
    for message in [
      client.upload(image[0..<1000], at: 0, of: image),
      client.message(.write, group: 1, command: 5, .map([])),
      client.message(.write, group: 1, command: 0, .textMap(["confirm": .bool(true)])),
      client.message(.write, group: 0, command: 5, .map([])),
    ] {
      let output = try device.handle(message, host: &host)
      #expect(try client.body(output) == .textMap(["rc": .unsigned(10)]))
      #expect(!output.restart, "a reset would end the OTA central's session")
    }
    // Reads and echo still answer.
    let echo = try client.body(
      try device.handle(
        client.message(.write, group: 0, command: 0, .textMap(["d": .text("x")])), host: &host))
    #expect(echo == .textMap(["r": .text("x")]))
    #expect(host.transaction.current(of: .ota) != nil, "the OTA transfer is untouched")
    // 30 s after the OTA central's last request, the device is free: the upload begins.
    host.advance(to: .seconds(31))
    let upload = try client.body(
      try device.handle(client.upload(image[0..<1000], at: 0, of: image), host: &host))
    #expect(upload == .textMap(["off": .unsigned(1000)]))
    #expect(host.transaction.current(of: .smp) != nil && host.transaction.current(of: .ota) == nil)
  }

  @Test func eraseForgetsTheOtherSlotAndNeverTouchesTheRunningOne() throws {
    // [S-CMD-8] [SEC-SMP-7]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = Client()
    _ = try Self.upload(try Self.image(), device: &device, host: &host, client: &client)
    #expect(try Self.states(&device, &host, &client).count == 2)
    let running = try client.body(
      try device.handle(
        client.message(.write, group: 1, command: 5, .textMap(["slot": .unsigned(0)])), host: &host))
    // The running slot is in use: Zephyr's "no free slot" (9).
    #expect(running == .textMap(["err": .textMap(["group": .unsigned(1), "rc": .unsigned(9)])]))
    let erased = try client.body(
      try device.handle(client.message(.write, group: 1, command: 5, .map([])), host: &host))
    #expect(erased == .map([]))
    #expect(try Self.states(&device, &host, &client).count == 1)
    #expect(host.engine.phase == .idle)
    #expect(fixture.runningSlotUntouched)
  }
}
