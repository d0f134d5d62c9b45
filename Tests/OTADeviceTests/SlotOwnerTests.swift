import Logging
import OTABoot
import OTACBOR
import OTAChecksum
import OTADaemon
import OTAEngine
import OTALink
import OTANordicDFU
import OTAReceiverHost
import OTASMP
import OTASMPServer
import OTAStorage
import OTATrust
import OTAWire
import Testing

/// One owner for the slot: protocols that share one `ReceiverHost`, as the daemon wires them,
/// interleaved as an attacker would interleave them. Whatever the order, the running slot is never
/// written, a slot armed for a trial holds exactly the bytes that were checked, and nothing traps.
@Suite struct SlotOwnerTests {
  static let key = ImageSigningKey.generate(.ed25519)

  /// A device that trusts `key`, with 4 KiB windows (a commit every 4 KiB).
  static func fixture() throws -> DeviceFixture {
    var fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    fixture.policy = ImagePolicy(trustedKeys: [key.publicKey])
    return fixture
  }

  /// Legacy DFU as nrf-ota starts it: START, the sizes, the init packet, RECEIVE FIRMWARE.
  static func startLegacy(
    _ legacy: inout LegacyDFUDevice, _ host: inout ReceiverHost, size: UInt32
  ) throws -> [[UInt8]] {
    var answers: [[UInt8]] = []
    answers += try legacy.control([0x01, 0x04], host: &host).notifications
    answers += try legacy.packet(LegacyDFUTests.sizes(size), host: &host).notifications
    answers += try legacy.control([0x02, 0x00], host: &host).notifications
    answers += try legacy.packet(LegacyDFUTests.initPacket(crc: 0xFFFF), host: &host).notifications
    answers += try legacy.control([0x02, 0x01], host: &host).notifications
    answers += try legacy.control([0x03], host: &host).notifications
    return answers
  }

  /// `count` bytes of Legacy DFU packets of 20 bytes (the attacker's bytes: 0xEE).
  static func legacyPackets(
    _ count: Int, _ legacy: inout LegacyDFUDevice, _ host: inout ReceiverHost
  ) throws -> [[UInt8]] {
    var answers: [[UInt8]] = []
    for start in stride(from: 0, to: count, by: 20) {
      answers += try legacy.packet([UInt8](repeating: 0xEE, count: min(20, count - start)), host: &host)
        .notifications
    }
    return answers
  }

  /// Seen in the field: a Legacy DFU session begun before an SMP upload and test went on writing
  /// into the slot the SMP test had armed, and the next boot ran those bytes on trial. Now SMP is
  /// told busy while the Legacy session holds the device; once it has been quiet for 30 s SMP takes
  /// over, and the Legacy session's later packets are refused (its transfer is stale, its slot
  /// sealed and armed): the slot that boots on trial holds the image that was checked, byte for byte.
  @Test(arguments: [false, true])
  func aLegacySessionCannotWriteIntoATrialThatSMPArmed(legacyFallsQuiet: Bool) throws {
    // [P-SESS-5] [P-ACT-2] [SEC-CHECK-5] [SEC-ATK-27]
    let fixture = try Self.fixture()
    var host = try fixture.makeHost()
    var legacy = LegacyDFUDevice()
    var smp = SMPDevice()
    var client = SMPDeviceTests.Client()
    let image = try MCUbootImageBuilder(version: SMPDeviceTests.v2, headerSize: 0x20).build(
      payload: SMPDeviceTests.payload, signingKey: Self.key)

    _ = try Self.startLegacy(&legacy, &host, size: 12_000)
    _ = try Self.legacyPackets(200, &legacy, &host)
    if legacyFallsQuiet { host.advance(to: .seconds(31)) }

    // An SMP client uploads a genuinely signed image and tests it (a trial of slot B, no restart).
    let uploaded = try SMPDeviceTests.upload(image, device: &smp, host: &host, client: &client)
    let states = try SMPDeviceTests.states(&smp, &host, &client)
    if let hash = states.last?["hash"]?.bytesValue {
      _ = try smp.handle(
        client.message(.write, group: 1, command: 0, .textMap(["hash": .bytes(hash)])), host: &host)
    }
    if legacyFallsQuiet {
      #expect(uploaded["off"] == .unsigned(UInt64(image.count)) && host.boot.trial?.slot == .b)
    } else {
      #expect(uploaded == .textMap(["rc": .unsigned(10)]), "busy: the Legacy session holds the device")
    }

    // The Legacy session goes on as if nothing happened, then asks for a reset.
    let answers = try Self.legacyPackets(4340, &legacy, &host)
    _ = try legacy.control([0x06], host: &host)
    if legacyFallsQuiet {
      #expect(answers.first == [0x10, 0x03, 0x02], "RECEIVE FIRMWARE: invalid state, its transfer is stale")
    }

    let next = try fixture.boot(verdict: .silent)
    #expect(fixture.runningSlotUntouched)
    #expect(next.running == (legacyFallsQuiet ? .b : .a))
    if next.running == .b {
      // Whatever runs from slot B is exactly the image that was checked.
      let stored = Array(fixture.medium.durableSlotBytes(.b).prefix(image.count))
      let differing = zip(stored, image).filter { $0 != $1 }.count
      #expect(differing == 0, "\(differing) bytes of slot B differ from the checked image, and it boots")
    }
  }

  /// Seen in the field: SMP kept its upload's offset after another protocol replaced the transfer,
  /// and a chunk at that offset made `end - committed` underflow and trap. Run in a child process:
  /// before the fix it died of "arithmetic overflow"; now it answers and exits 0.
  @Test func anSMPChunkAfterAnotherProtocolsCommitIsAnsweredNotATrap() async {
    // [SEC-CHECK-5] [SEC-ATK-28]
    await #expect(processExitsWith: .success) {
      let fixture = try SlotOwnerTests.fixture()
      var host = try fixture.makeHost()
      var legacy = LegacyDFUDevice()
      var smp = SMPDevice()
      var client = SMPDeviceTests.Client()
      let image = try MCUbootImageBuilder(version: SMPDeviceTests.v2, headerSize: 0x20).build(
        payload: SMPDeviceTests.payload, signingKey: SlotOwnerTests.key)
      // An SMP first chunk of 1000 bytes...
      _ = try smp.handle(client.upload(image[0..<1000], at: 0, of: image), host: &host)
      // ... a Legacy DFU transfer committed past 4096...
      _ = try SlotOwnerTests.startLegacy(&legacy, &host, size: 12_000)
      _ = try SlotOwnerTests.legacyPackets(5000, &legacy, &host)
      // ... then the SMP chunk at offset 1000.
      let answer = try smp.handle(client.upload(image[1000..<2000], at: 1000, of: image), host: &host)
      guard answer.response != nil else { throw SMPAnswerMissing() }
    }
  }

  struct SMPAnswerMissing: Error {}

  /// Found by the interleaving fuzzer: the boot state on the disk said slot B's trial had begun
  /// while the host in memory ran A (a start that could not finish recording its boot; another
  /// process that changed the state). An OTA PREPARE or an SMP first chunk of B then trapped in
  /// `BootState.invalidate`. The state read under the lock has the last word: the request is
  /// answered (OTA: storage error; SMP: no free slot) and B's record stays as it was. Run in a child process: before
  /// the fix it died of "the running and confirmed slots are never invalidated".
  @Test func aPrepareOfASlotTheStoredStateSaysRunsIsRefusedNotATrap() async {
    // [SEC-CHECK-5] [SEC-ATK-28]
    await #expect(processExitsWith: .success) {
      // Slot B armed for a trial, as this host knows it; then the stored state says B's boot began.
      let fixture = DeviceFixture(slotCapacity: 64 * 1024)
      var host = try SealTests.armedTrial(fixture)
      #expect(host.running == .a && host.boot.trial?.begun == false)
      try fixture.control.update { $0.beginAttempt() }
      // The SMP session that armed it has fallen quiet: the device is free for the next one.
      host.advance(to: .seconds(31))
      _ = try host.handle(.connected(mtu: ATTMTU(247)))
      let prepare = Request.prepare(size: 4000, crc32: 7, version: SMPDeviceTests.v2).encoded
      let answers = try host.handle(.control(prepare, now: .seconds(31)))
      #expect(answers == [.notify(Response(.prepare, .storageError).encoded)])
      var smp = SMPDevice()
      var client = SMPDeviceTests.Client()
      let image = try SMPDeviceTests.image()
      let first = try client.body(smp.handle(client.upload(image[0..<1000], at: 0, of: image), host: &host))
      // SMP's own "no free slot" (img_mgmt rc 9): B is the slot the stored state says runs.
      #expect(first == .textMap(["err": .textMap(["group": .unsigned(1), "rc": .unsigned(9)])]))
      let stored = try fixture.control.read().state
      #expect(stored.trial?.slot == .b && stored.trial?.begun == true && stored[.b].status == .trial)
    }
  }
}

/// Another central cannot end a Nordic DFU session it does not own: in the daemon's loop, a second
/// central's writes are dropped while the first central's session is under way (its SYS RESET
/// included), and it may begin once the first has gone.
@Suite struct NordicDFUCentralOwnershipTests {
  static let first = ScriptedNordicDFULink.central
  static let second = "/org/bluez/hci0/dev_00_AA_01_00_00_02"

  @Test func aSecondCentralCannotResetOrRestartTheFirstCentralsSession() throws {
    // [SEC-CHECK-5] [SEC-ATK-31]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    func control(_ central: String, _ bytes: [UInt8]) -> PeripheralEvent {
      .nordicDFUControl(.legacy, central: central, bytes)
    }
    func packet(_ central: String, _ bytes: [UInt8]) -> PeripheralEvent {
      .nordicDFUPacket(.legacy, central: central, bytes)
    }
    let firmware = LegacyDFUTests.firmware
    var script: [PeripheralEvent] = [
      control(Self.first, [0x01, 0x04]), packet(Self.first, LegacyDFUTests.sizes(UInt32(firmware.count))),
      control(Self.first, [0x02, 0x00]), packet(Self.first, LegacyDFUTests.initPacket()),
      control(Self.first, [0x02, 0x01]), control(Self.first, [0x03]),
      packet(Self.first, Array(firmware[0..<20])),
      // The second central: a reset, a new START, bytes of its own. None reaches the session.
      control(Self.second, [0x06]), control(Self.second, [0x01, 0x04]), packet(Self.second, [0xEE, 0xEE]),
    ]
    for start in stride(from: 20, to: firmware.count, by: 20) {
      script.append(packet(Self.first, Array(firmware[start..<min(start + 20, firmware.count)])))
    }
    script += [
      control(Self.first, [0x04]),
      // The first central goes; now the second may begin, and its SYS RESET is carried out.
      .nordicDFUCentralGone(.legacy, central: Self.first),
      control(Self.second, [0x06]),
    ]
    let link = ScriptedNordicDFULink(script)
    let service = DeviceService(host: try fixture.makeHost(), link: link, logger: Logger(label: "test"))
    service.nordicDFU[.legacy] = LegacyDFUDevice()
    #expect(try service.run(stopSignals: nil) == .restart)
    #expect(link.script.isEmpty, "the loop restarted at the second central's last SYS RESET, not before")
    #expect(link.notifications.last == [0x10, 0x04, 0x01], "the first central's firmware validated whole")
    #expect(Array(fixture.medium.slotBytes(.b).prefix(firmware.count)) == firmware)
  }
}

/// Nothing from a peer ends the daemon: a storage failure on the way of any protocol's request is
/// answered in that protocol's terms and the loop goes on.
@Suite struct PeerErrorsEndNothingTests {
  /// SMP's confirm of a running trial when the boot state cannot be written: rc "flash write
  /// failed", noted; before, the error left `SMPDevice.handle` and ended otad.
  @Test func anSMPConfirmTheStorageCannotRecordIsAnsweredNotThrown() throws {
    // [SEC-LIMIT-5]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    _ = try SealTests.armedTrial(fixture)
    var host = try fixture.boot(verdict: .silent)
    #expect(host.runningOnTrial)
    var device = SMPDevice()
    var client = SMPDeviceTests.Client()
    fixture.medium.inject(.ioError, atOperation: 0, of: [.recordWrite])
    let output = try device.handle(
      client.message(.write, group: 1, command: 0, .textMap(["confirm": .bool(true)])), host: &host)
    let answer = try client.body(output)
    // rc 12: the image group's "flash write failed".
    #expect(answer == .textMap(["err": .textMap(["group": .unsigned(1), "rc": .unsigned(12)])]), "\(answer)")
    #expect(output.note?.hasPrefix("storage failed:") == true, "\(output.note ?? "")")
    #expect(host.runningOnTrial, "nothing was confirmed")
  }

  /// Secure DFU's last EXECUTE when the slot cannot be read back for its SHA-256: the daemon's loop
  /// answers "operation failed" and goes on to the next event.
  @Test func aSecureDFUStepTheStorageFailsIsAnsweredAndTheLoopGoesOn() throws {
    // [SEC-LIMIT-5]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var script = SecureDFUFaultTests.flow()
    script.append(.nordicDFUControl(.secure, central: ScriptedNordicDFULink.central, [0x00]))
    let link = ScriptedNordicDFULink(script)
    let service = DeviceService(host: try fixture.makeHost(), link: link, logger: Logger(label: "test"))
    // The next slot read fails: the last EXECUTE's SHA-256 of the firmware cannot be taken.
    fixture.medium.inject(.ioError, atOperation: 0, of: [.slotRead])
    service.nordicDFU[.secure] = SecureDFUDevice(trust: SecureDFUTests.trust)
    #expect(throws: LinkError.protocolViolation("the script is spent")) { try service.run(stopSignals: nil) }
    #expect(link.notifications.contains([0x60, 0x04, 0x0A]), "EXECUTE: operation failed")
    #expect(link.notifications.last == [0x60, 0x00, 0x01, SecureDFU.protocolVersionNumber], "still serving")
    #expect(fixture.runningSlotUntouched)
  }
}

@Suite struct NordicDFUCentralGateTests {
  @Test func theOwnerKeepsItsSessionUntilItGoesOrFallsQuiet() {
    // [SEC-CHECK-5]
    var gate = NordicDFUCentralGate(leaseTimeout: .seconds(30))
    #expect(gate.admit("a", now: .zero, sessionActive: false) == .admit)
    #expect(gate.admit("b", now: .seconds(1), sessionActive: true) == .refuse(owner: "a", refused: 1))
    #expect(gate.admit("b", now: .seconds(2), sessionActive: true) == .refuse(owner: "a", refused: 2))
    #expect(gate.admit("a", now: .seconds(20), sessionActive: true) == .admit)
    #expect(gate.admit("b", now: .seconds(49), sessionActive: true) == .refuse(owner: "a", refused: 3))
    // 30 s of the owner's silence: the next central takes over, and its refusals count anew.
    #expect(gate.admit("b", now: .seconds(50), sessionActive: true) == .takeOver(previous: "a"))
    #expect(gate.admit("a", now: .seconds(51), sessionActive: true) == .refuse(owner: "b", refused: 1))
    // An idle session (nothing under way) is anyone's at once.
    #expect(gate.admit("a", now: .seconds(52), sessionActive: false) == .takeOver(previous: "b"))
    // Only the owner's departure ends it.
    #expect(!gate.gone("b") && gate.owner == "a")
    #expect(gate.gone("a") && gate.owner == nil)
    #expect(gate.admit("b", now: .seconds(53), sessionActive: true) == .admit)
    #expect(gate.release() == "b" && gate.owner == nil)
  }
}

@Suite struct SMPOneUploadContextTests {
  /// An image another protocol validated (`otactl push --no-activate`) is slot 1's for SMP: once
  /// the OTA central's session has gone, a "test" of its hash activates it.
  @Test func anSMPTestActivatesAnImageTheOTAProtocolValidated() throws {
    // [S-ONE-5]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try fixture.makeHost()
    let image = try SMPDeviceTests.image()
    let transfer = try host.begin(.ota, size: UInt32(image.count), crc32: 1, version: SMPDeviceTests.v2).get()
    _ = try host.perform(.write(slot: .b, offset: 0, bytes: image[...]), for: transfer.id).get()
    _ = try host.validate(transfer.id, crc32: CRC32.checksum(image)).get()
    var device = SMPDevice()
    var client = SMPDeviceTests.Client()
    let states = try SMPDeviceTests.states(&device, &host, &client)
    let hash = try #require(states.last?["hash"]?.bytesValue)
    let test = client.message(.write, group: 1, command: 0, .textMap(["hash": .bytes(hash)]))
    #expect(try client.body(try device.handle(test, host: &host)) == .textMap(["rc": .unsigned(10)]))
    host.release(.ota)
    let answer = try client.body(try device.handle(test, host: &host))
    #expect(answer["images"] != nil, "\(answer)")
    #expect(host.boot.trial?.slot == .b && host.transfer(transfer.id) == nil)
  }

  /// A first chunk from another client replaces the upload under way, as on a Zephyr device; the
  /// first client's next chunk is told where the device is (the new upload's offset).
  @Test func aFirstChunkFromAnotherClientReplacesTheUpload() throws {
    // [S-ONE-5]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    var host = try fixture.makeHost()
    var device = SMPDevice()
    var client = SMPDeviceTests.Client()
    let image = try SMPDeviceTests.image()
    for offset in stride(from: 0, to: 3000, by: 1000) {
      _ = try device.handle(
        client.upload(image[offset..<offset + 1000], at: offset, of: image), host: &host,
        client: "10.0.0.1:1337")
    }
    let first = try #require(host.transaction.current(of: .smp)?.id)
    _ = try device.handle(
      client.upload(image[0..<1000], at: 0, of: image), host: &host, client: "10.0.0.2:1337")
    #expect(host.transfer(first) == nil, "the first upload's identity is stale")
    let next = try client.body(
      try device.handle(
        client.upload(image[3000..<4000], at: 3000, of: image), host: &host, client: "10.0.0.1:1337"))
    #expect(next == .textMap(["off": .unsigned(1000)]))
  }

}
