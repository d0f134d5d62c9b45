import Foundation
import OTATestSupport
import Testing

/// The three flows of nRF Connect Device Manager (the Android and iOS McuMgr libraries' firmware
/// upgrade modes), over UDP with the exact bytes of every command but the upload's chunks: test and
/// confirm, confirm only, test only. No phone was tried: the requests are the ones those libraries
/// send (SMP version 2 headers), and the answers are otad's.
@Suite(.serialized) struct SMPPhoneFlowTests {
  static let image =
    (try? Data(contentsOf: URL(fileURLWithPath: TrialBootProcessTests.sample("firmware-v2.bin"))))
    .map { [UInt8]($0) } ?? []
  /// firmware-v2.bin's SHA256 TLV, as image state read reports it.
  static let hash = "37e734237bd63464e60754f2a216b7f4e5113db46f36e314a0b3789e7e581dc5"
  /// The SHA-256 of the whole file, as the McuMgr libraries send it in the first chunk's "sha".
  static let fileSHA = "cf313b7dda71549c6b167c9ebabdadf75f312617d4c89b4764773b2d12022d31"

  func device(_ address: String, extra: [String] = []) throws -> Daemon {
    let factory = try Data(contentsOf: URL(fileURLWithPath: TrialBootProcessTests.sample("firmware-v1.bin")))
    let daemon = try Daemon(capacity: "64KiB", firmware: [UInt8](factory))
    try daemon.start(extra: ["--smp-udp", "\(address):1337", "--factory-version", "1.0.0"] + extra)
    return daemon
  }

  /// Uploads the image in 1024-byte chunks ({"off", "data"}, and "image", "len", "sha" with the
  /// first), each answered {"off": next}; the last also {"match": true}, the file's SHA-256 checked.
  func upload(_ client: UDPClient) throws {
    var offset = 0
    var sequence: UInt8 = 0x10
    while offset < Self.image.count {
      let chunk = Array(Self.image[offset..<min(Self.image.count, offset + 1024)])
      var body = offset == 0 ? [0xA5] + TinyCBOR.text("image") + [0x00] : [0xA2]
      body += TinyCBOR.text("off") + TinyCBOR.unsigned(offset)
      if offset == 0 {
        body += TinyCBOR.text("len") + TinyCBOR.unsigned(Self.image.count)
        body += TinyCBOR.text("sha") + TinyCBOR.bytes(UDPClient.bytes(Self.fileSHA))
      }
      body += TinyCBOR.text("data") + TinyCBOR.bytes(chunk)
      let header: [UInt8] = [0x0A, 0, UInt8(body.count >> 8), UInt8(body.count & 0xFF), 0, 1, sequence, 1]
      let answer = try #require(try client.ask(HexNotation.string(header + body)))
      let next = offset + chunk.count
      let last = next == Self.image.count
      let match = last ? TinyCBOR.text("match") + [0xF5] : []
      let expected =
        [0x0B, 0, 0, UInt8(1 + 4 + TinyCBOR.unsigned(next).count + match.count), 0, 1, sequence, 1]
        + [last ? 0xA2 : 0xA1] + TinyCBOR.text("off") + TinyCBOR.unsigned(next) + match
      #expect(answer == HexNotation.string(expected), "chunk at \(offset)")
      offset = next
      sequence &+= 1
    }
  }

  /// Image state write: {"hash": h'…', "confirm": b}.
  func stateWrite(confirm: Bool, sequence: UInt8) -> String {
    // a2 6468617368 5820 <32 bytes> 67636f6e6669726d f5|f4: 49 bytes
    "0a000031" + "0001" + HexNotation.string([sequence]) + "00"
      + "a2" + "6468617368" + "5820" + Self.hash + "67636f6e6669726d" + (confirm ? "f5" : "f4")
  }

  @Test func testAndConfirm() throws {
    // [S-PHONE-1] [S-UP-8]
    let daemon = try device("127.0.0.31", extra: ["--confirm", "manual", "--confirm-timeout", "never"])
    let client = try UDPClient(address: "127.0.0.31")
    try upload(client)
    // test: answered with the state (slot 1 pending, not permanent)
    let tested = try #require(try client.ask(stateWrite(confirm: false, sequence: 0x40)))
    #expect(tested.hasPrefix("0b00") && tested.dropFirst(8).hasPrefix("00014000"), "\(tested)")
    #expect(tested.contains("6770656e64696e67f5"), "pending: true in \(tested)")
    // reset: {} then the restart into the trial
    #expect(try client.ask("0a00000000004105") == "0b00000100004105a0")
    var status = try daemon.waitForStatus { $0.running == "B" }
    #expect(status.onTrial == true, "\(daemon.log)")
    // confirm with the (now running) image's hash: answered with the state, slot 0 confirmed
    let confirmed = try #require(try client.ask(stateWrite(confirm: true, sequence: 0x42)))
    #expect(confirmed.hasPrefix("0b00") && confirmed.contains("69636f6e6669726d6564f5"), "\(confirmed)")
    status = try daemon.status()
    #expect(status.confirmed == "B" && status.onTrial == false, "\(daemon.log)")
    #expect(daemon.stop() == 0)
  }

  @Test func confirmOnly() throws {
    // [S-PHONE-1]
    let daemon = try device("127.0.0.32")
    let client = try UDPClient(address: "127.0.0.32")
    try upload(client)
    let permanent = try #require(try client.ask(stateWrite(confirm: true, sequence: 0x40)))
    #expect(permanent.contains("697065726d616e656e74f5"), "permanent: true in \(permanent)")
    #expect(try client.ask("0a00000000004105") == "0b00000100004105a0")
    let status = try daemon.waitForStatus { $0.running == "B" }
    #expect(status.confirmed == "B" && status.onTrial == false, "\(daemon.log)")
    #expect(daemon.stop() == 0)
  }

  @Test func testOnly() throws {
    // [S-PHONE-1]
    // Nobody confirms over SMP: otad's health check decides (the sample 2.0.0 passes it).
    let daemon = try device("127.0.0.33", extra: ["--health-check", TrialBootProcessTests.healthCheck])
    let client = try UDPClient(address: "127.0.0.33")
    try upload(client)
    _ = try #require(try client.ask(stateWrite(confirm: false, sequence: 0x40)))
    #expect(try client.ask("0a00000000004105") == "0b00000100004105a0")
    let status = try daemon.waitForStatus { $0.confirmed == "B" }
    #expect(status.running == "B" && status.onTrial == false, "\(daemon.log)")
    #expect(daemon.stop() == 0)
  }
}

/// Just enough CBOR to write the requests by hand (ProcessTests imports no project target but test support).
enum TinyCBOR {
  static func head(_ major: UInt8, _ value: Int) -> [UInt8] {
    switch value {
    case 0..<24: [major << 5 | UInt8(value)]
    case 24..<256: [major << 5 | 24, UInt8(value)]
    default: [major << 5 | 25, UInt8(value >> 8), UInt8(value & 0xFF)]
    }
  }

  static func unsigned(_ value: Int) -> [UInt8] { head(0, value) }
  static func bytes(_ value: [UInt8]) -> [UInt8] { head(2, value.count) + value }
  static func text(_ value: String) -> [UInt8] { head(3, value.utf8.count) + Array(value.utf8) }
}
