import Logging
import OTACBOR
import OTADaemon
import OTALink
import OTASMP
import OTASMPServer
import OTAWire
import Testing

/// The daemon's loop with SMP writes coming from the link as BlueZ delivers them (pieces per
/// central, with the central's MTU): the same SMP path as UDP answers them, in notifications cut
/// at MTU − 3.
@Suite struct SMPOverBluetoothServiceTests {
  /// A link that hands out one scripted batch of events per turn of the loop and records the SMP
  /// notifications; it fails the loop once the script is spent (a test never hangs).
  final class ScriptedLink: PeripheralLink {
    var script: [[PeripheralEvent]]
    var notifications: [[UInt8]] = []
    var otaNotifications: [[UInt8]] = []

    init(_ script: [[PeripheralEvent]]) { self.script = script }

    var descriptors: [Int32] { [] }
    var nextDeadline: Duration? { .zero }
    func service(readable: Set<Int32>, now: Duration, value: CharacteristicValue) throws(LinkError)
      -> [PeripheralEvent]
    {
      guard !script.isEmpty else { throw .protocolViolation("the script is spent") }
      return script.removeFirst()
    }
    func notify(_ bytes: [UInt8]) { otaNotifications.append(bytes) }
    func notifySMP(_ bytes: [UInt8]) { notifications.append(bytes) }
    func disconnect() {}
  }

  static func pieces(_ bytes: [UInt8], of size: Int) -> [[UInt8]] {
    stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
  }

  /// The answers in the notifications, put together again by their headers' lengths.
  static func answers(_ notifications: [[UInt8]]) throws -> [[UInt8]] {
    var assembler = SMPFrameAssembler(maxBody: 4096)
    return try assembler.append(notifications.flatMap { $0 })
  }

  func run(_ script: [[PeripheralEvent]]) throws -> (DeviceService.Stop, ScriptedLink) {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    let link = ScriptedLink(script)
    let service = DeviceService(
      host: try fixture.makeHost(), link: link, logger: Logger(label: "test"), smp: SMPService())
    return (try service.run(stopSignals: nil), link)
  }

  @Test func aRequestWrittenInPiecesIsAnsweredInNotificationsOfAtMostMTUMinusThree() throws {
    // [S-BLE-4] [S-BLE-6] [S-CMD-2] [SEC-SMP-9]
    let text = String(repeating: "ping ", count: 20)
    let echo = SMPMessage.encoded(.write, group: 0, command: 0, sequence: 1, .textMap(["d": .text(text)]))
    let reset = SMPMessage.encoded(.write, group: 0, command: 5, sequence: 2, .textMap([:]))
    let central = "/org/bluez/hci0/dev_AA"
    let writes = Self.pieces(echo, of: 20).map {
      [PeripheralEvent.smpWrite(central: central, mtu: 23, bytes: $0)]
    }
    let (stop, link) = try run(writes + [[.smpWrite(central: central, mtu: 23, bytes: reset)]])
    #expect(stop == .restart, "the SMP reset restarts the device, as over UDP")
    #expect(link.notifications.allSatisfy { $0.count <= 20 }, "\(link.notifications.map(\.count))")
    #expect(link.notifications.count > 5, "the echo's answer took several notifications")
    #expect(link.otaNotifications.isEmpty, "nothing went to the OTA control point")
    let answers = try Self.answers(link.notifications)
    try #require(answers.count == 2)
    let echoed = try CBORDecoder.decode(Array(answers[0].dropFirst(SMPHeader.byteCount)))
    #expect(echoed == .textMap(["r": .text(text)]))
    #expect(try SMPHeader(bytes: answers[0]).sequence == 1)
    #expect(try SMPHeader(bytes: answers[1]).sequence == 2 && answers[1].count == SMPHeader.byteCount + 1)
  }

  @Test func twoCentralsWritingAtOnceGetTheirOwnAnswersAndALyingHeaderIsRefused() throws {
    // [S-BLE-4] [S-BLE-6] [SEC-SMP-9]
    let first = SMPMessage.encoded(.write, group: 0, command: 0, sequence: 10, .textMap(["d": .text("one")]))
    let second = SMPMessage.encoded(.write, group: 0, command: 0, sequence: 20, .textMap(["d": .text("two")]))
    let huge = SMPHeader(operation: .write, version: 1, length: 4000, group: 1, sequence: 30, command: 1)
      .encoded
    let reset = SMPMessage.encoded(.write, group: 0, command: 5, sequence: 40, .textMap([:]))
    let (stop, link) = try run([
      [.smpWrite(central: "a", mtu: 247, bytes: Array(first[0..<6]))],
      [.smpWrite(central: "b", mtu: 247, bytes: Array(second[0..<9]))],
      [.smpWrite(central: "c", mtu: 247, bytes: huge)],
      [.smpWrite(central: "b", mtu: 247, bytes: Array(second[9...]))],
      [.smpCentralGone(central: "a")],
      [.smpWrite(central: "a", mtu: 247, bytes: Array(first[6...]))],
      [.smpWrite(central: "d", mtu: 247, bytes: reset)],
    ])
    #expect(stop == .restart)
    let answers = try Self.answers(link.notifications)
    let sequences = try answers.map { try SMPHeader(bytes: $0).sequence }
    #expect(
      sequences.first == 30 && sequences.dropFirst().first == 20 && sequences.last == 40, "\(sequences)")
    #expect(!sequences.contains(10), "central a went away mid-message: its message is never answered whole")
    let refused = try CBORDecoder.decode(Array(answers[0].dropFirst(SMPHeader.byteCount)))
    #expect(refused == .textMap(["rc": .unsigned(7)]), "over buf_size: EMSGSIZE, as over UDP")
    #expect(
      try CBORDecoder.decode(Array(answers[1].dropFirst(SMPHeader.byteCount)))
        == .textMap(["r": .text("two")]))
  }

  /// [P-SESS-5]: SMP's session holds the device while it acts and its central has not disconnected.
  /// An upload begun over Bluetooth holds it (the OTA protocol's PREPARE is busy); once that central
  /// has gone, nothing holds it: PREPARE is taken at once, not 30 s later (nor a kept activation
  /// delayed as long).
  /// Runs `script` until it is spent (the loop then ends with the link's error): the link, with what
  /// was notified.
  static func runOut(_ script: [[PeripheralEvent]]) throws -> ScriptedLink {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024, windowCapacity: 4096)
    let link = ScriptedLink(script)
    let service = DeviceService(
      host: try fixture.makeHost(), link: link, logger: Logger(label: "test"), smp: SMPService())
    #expect(throws: (any Error).self) { try service.run(stopSignals: nil) }
    return link
  }

  @Test func anSMPCentralThatGoesLetsTheDeviceGoAtOnce() throws {
    // [P-SESS-5] [S-ONE-2]
    let image = try SMPDeviceTests.image()
    let first = SMPMessage.encoded(
      .write, group: 1, command: 1, sequence: 1,
      .textMap([
        "image": .unsigned(0), "off": .unsigned(0), "len": .unsigned(UInt64(image.count)),
        "data": .bytes(Array(image[0..<500])), "sha": .bytes([1, 2, 3, 4]),
      ]))
    let prepare = Request.prepare(size: 1000, crc32: 0, version: Version(major: 2, minor: 0, revision: 0))
      .encoded
    let upload: [[PeripheralEvent]] = [[.smpWrite(central: "phone", mtu: 517, bytes: first)]]
    let held = try Self.runOut(upload + [[.controlWrite(prepare)]])
    let taken = try Self.answers(held.notifications).first.map {
      try CBORDecoder.decode(Array($0.dropFirst(SMPHeader.byteCount)))
    }
    #expect(taken?["off"] == .unsigned(500), "the upload began: \(String(describing: taken))")
    #expect(
      held.otaNotifications.first.map { Array($0.prefix(3)) } == [0x60, 0x01, 0x0C], "busy: SMP holds it")
    // Another central that only reads, and goes: the upload's hold stays.
    let read = SMPMessage.encoded(.read, group: 1, command: 0, sequence: 2, .textMap([:]))
    let reader = try Self.runOut(
      upload + [
        [.smpWrite(central: "tablet", mtu: 517, bytes: read)], [.smpCentralGone(central: "tablet")],
        [.controlWrite(prepare)],
      ])
    #expect(reader.otaNotifications.first.map { Array($0.prefix(3)) } == [0x60, 0x01, 0x0C], "still busy")
    let gone = try Self.runOut(upload + [[.smpCentralGone(central: "phone")], [.controlWrite(prepare)]])
    #expect(gone.otaNotifications.first.map { Array($0.prefix(3)) } == [0x60, 0x01, 0x00], "taken at once")
  }
}
