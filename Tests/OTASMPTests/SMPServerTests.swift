import OTACBOR
import OTASMP
import OTATestSupport
import Testing

/// The server on exact byte sequences: what a client sends, what goes back.
@Suite struct SMPServerTests {
  let server = SMPServer()
  let hash = [UInt8](repeating: 0x5A, count: 32)
  var view: SMPDeviceView {
    var system = SMPSystemInfo()
    system.nodeName = "pi"
    system.kernelRelease = "6.6.0"
    system.machine = "aarch64"
    return SMPDeviceView(
      images: [
        SMPImageSlot(slot: 0, version: "1.2.3", hash: hash, confirmed: true, active: true),
        SMPImageSlot(slot: 1, version: "1.3.0.7", hash: [UInt8](repeating: 0x11, count: 32), pending: true),
      ], system: system, downgradesRefused: true)
  }

  func answer(_ hex: String) -> String? {
    guard case .respond(let bytes) = server.handle(HexNotation.bytes(hex), device: view) else { return nil }
    return HexNotation.string(bytes)
  }

  @Test func echoInVersion2() {
    // [S-HDR-1] [S-HDR-2] [S-CMD-1]
    // write, v2, length 6, group 0, sequence 1, command 0: {"d": "hi"} -> {"r": "hi"}
    #expect(
      answer("0a00000600000100" + "a161646268 69".compact) == "0b00000600000100" + "a161726268 69".compact)
  }

  @Test func echoInVersion1() {
    // [S-CMD-1]
    #expect(answer("0200000600002a00" + "a16164626869") == "0300000600002a00" + "a16172626869")
  }

  @Test func echoWithoutTextIsAnInvalidValue() {
    // [S-CMD-1] [S-ERR-3]
    // {"d": 1}: rc 3
    #expect(answer("0200000400000300" + "a1616401") == "0300000500000300" + "a1627263" + "03")
    // no body at all
    #expect(answer("0200000000000300") == "0300000500000300" + "a162726303")
  }

  @Test func parametersGiveBufferSizeAndCount() {
    // [S-CMD-3]
    let body = "a2" + "686275665f73697a65" + "190800" + "696275665f636f756e74" + "01"
    #expect(answer("0000000000000506") == "0100001800000506" + body)
  }

  @Test func unknownGroupAndCommandAreNotSupported() {
    // [S-ERR-2]
    // group 64, command 7; then OS group command 42; then reset as a read: all rc 8.
    #expect(answer("0000000000400700") == "0100000500400700" + "a162726308")
    #expect(answer("080000000000092a") == "090000050000092a" + "a162726308")
    #expect(answer("0000000100000905" + "a0") == "0100000500000905" + "a162726308")
  }

  @Test func aLaterVersionIsTooNew() {
    // [S-ERR-6]
    // version bits 2: answered in version 2 with rc 13 (MGMT_ERR_EUNSUPPORTED_TOO_NEW)
    #expect(answer("1000000000000506") == "0900000500000506" + "a16272630d")
  }

  @Test func aHeaderWhoseLengthLiesIsAnInvalidValue() {
    // [S-ERR-4]
    #expect(answer("0200000a00000100" + "a0") == "0300000500000100" + "a162726303")
    #expect(answer("0200000000000100" + "a0") == "0300000500000100" + "a162726303")
  }

  @Test func aMessageOverTheBufferSizeIsTooLarge() {
    // [S-ERR-5]
    let small = SMPServer(configuration: SMPServerConfiguration(bufferSize: 16))
    let request = HexNotation.bytes("0200000a00000100" + "a16164666162636465")
    guard case .respond(let bytes) = small.handle(request + [], device: view) else {
      Issue.record("no answer")
      return
    }
    // The length check comes first: 9 body bytes announced as 10.
    #expect(HexNotation.string(bytes) == "0300000500000100a162726303")
    let exact = HexNotation.bytes("0200000900000100" + "a16164666162636465")
    guard case .respond(let tooLarge) = small.handle(exact, device: view) else {
      Issue.record("no answer")
      return
    }
    #expect(HexNotation.string(tooLarge) == "0300000500000100a162726307")
  }

  @Test func aMessageCutShortByItsTransportIsTooLarge() {
    // [S-ERR-5]
    #expect(
      server.refuseTooLarge(HexNotation.bytes("0a0008020000070000"))
        == .respond(HexNotation.bytes("0b00000500000700a162726307")))
    #expect(server.refuseTooLarge(HexNotation.bytes("0a00")) == .ignore("a message over 2048 bytes"))
  }

  @Test func responsesAndShortMessagesAreNotAnswered() {
    // [S-ERR-7]
    #expect(
      server.handle(HexNotation.bytes("0300000000000100"), device: view)
        == .ignore("an SMP response sent to the server"))
    if case .ignore = server.handle([0x02, 0x00], device: view) {
    } else {
      Issue.record("seven bytes answered")
    }
  }

  @Test func bootloaderInfoSaysMCUbootAndItsMode() {
    // [S-CMD-5] [S-MODE-1]
    let name = "a1" + "6a626f6f746c6f61646572" + "674d4355626f6f74"
    #expect(answer("0800000000000108") == "0900001400000108" + name)
    // {"query": "mode"} -> {"mode": 3, "no-downgrade": true}
    let query = "a1" + "657175657279" + "646d6f6465"
    let mode = "a2" + "646d6f6465" + "03" + "6c6e6f2d646f776e6772616465" + "f5"
    #expect(answer("0800000c00000108" + query) == "0900001500000108" + mode)
  }

  @Test func osInfoFollowsItsFormatLetters() throws {
    // [S-CMD-4]
    #expect(try output(format: nil) == "Linux")
    #expect(try output(format: "rn") == "pi 6.6.0")
    #expect(try output(format: "a") == "Linux pi 6.6.0   aarch64   otad")
    #expect(try output(format: "q") == nil)
  }

  func output(format: String?) throws -> String? {
    let body: CBOR = format.map { .textMap(["format": .text($0)]) } ?? .map([])
    let request = SMPHeader(
      operation: .read, length: UInt16(body.encoded.count), group: 0, sequence: 9, command: 7)
    guard case .respond(let bytes) = server.handle(request.encoded + body.encoded, device: view) else {
      return nil
    }
    let answer = try CBORDecoder.decode(Array(bytes.dropFirst(8)))
    return answer["output"]?.textValue
  }

  @Test func imageStateReadListsBothSlots() throws {
    // [S-CMD-6] [S-STATE-1]
    guard case .respond(let bytes) = server.handle(HexNotation.bytes("0800000000010300"), device: view) else {
      Issue.record("no answer")
      return
    }
    #expect(
      Array(bytes.prefix(8)) == HexNotation.bytes("0900") + [
        UInt8((bytes.count - 8) >> 8), UInt8((bytes.count - 8) & 0xFF),
      ] + HexNotation.bytes("00010300"))
    let body = try CBORDecoder.decode(Array(bytes.dropFirst(8)))
    guard case .array(let images) = body["images"] else {
      Issue.record("no images")
      return
    }
    #expect(images.count == 2)
    #expect(images[0]["slot"] == .unsigned(0))
    #expect(images[0]["version"] == .text("1.2.3"))
    #expect(images[0]["hash"] == .bytes(hash))
    #expect(images[0]["active"] == .bool(true))
    #expect(images[0]["confirmed"] == .bool(true))
    #expect(images[1]["pending"] == .bool(true))
    #expect(images[1]["version"] == .text("1.3.0.7"))
    #expect(body["splitStatus"] == .unsigned(0))
  }

  @Test func stateWriteWithABadHashIsAnImageError() {
    // [S-CMD-7] [S-STATE-2] [S-ERR-1]
    // {"hash": h'010203'}: v2 answers the image group's rc 24 (invalid hash), v1 the generic rc 3.
    let request = "a1" + "6468617368" + "43010203"
    let v2 = "a1" + "63657272" + "a2" + "6567726f7570" + "01" + "627263" + "1818"
    #expect(answer("0a00000a00010400" + request) == "0b00001200010400" + v2)
    #expect(answer("0200000a00010400" + request) == "0300000500010400" + "a162726303")
  }

  @Test func deviceCommandsAreHandedToTheHost() {
    // [S-HDR-1] [S-HDR-2]
    let upload = "a4636f666600636c656e0a6464617461430102036775706772616465f4"
    let step = server.handle(HexNotation.bytes("0a00001d00010501" + upload), device: view)
    guard case .perform(let command, let pending) = step else {
      Issue.record("not performed: \(step)")
      return
    }
    #expect(
      command
        == .upload(SMPUpload(image: 0, offset: 0, length: 10, data: [1, 2, 3], sha: nil, upgrade: false)))
    // The host's answer goes back under the request's group, command and sequence.
    let answer = server.respond(to: pending, with: .success([CBOR.Entry(.text("off"), .unsigned(3))]))
    #expect(HexNotation.string(answer) == "0b00000600010501" + "a1636f666603")
    #expect(
      HexNotation.string(server.respond(to: pending, with: .failure(.image(.imageTooLarge))))
        == "0b00001200010501"
        + "a163657272a26567726f75700162726318" + "1e")

    guard
      case .perform(.reset(force: false), _) = server.handle(
        HexNotation.bytes("0a00000000000005"), device: view)
    else {
      Issue.record("reset not performed")
      return
    }
    guard
      case .perform(.stateWrite(hash: nil, confirm: true), _) = server.handle(
        HexNotation.bytes("0a00000a00010600" + "a167636f6e6669726df5"), device: view)
    else {
      Issue.record("confirm not performed")
      return
    }
    guard
      case .perform(.erase(slot: 1), _) = server.handle(HexNotation.bytes("0a00000000010705"), device: view)
    else {
      Issue.record("erase not performed")
      return
    }
  }

  @Test func uploadsWithFieldsOfTheWrongTypeAreInvalidValues() {
    // [S-UP-2] [S-ERR-3] [SEC-SMP-5]
    // "off" as text; "data" as text; "len" as text; "sha" as text; not a map
    for body in [
      CBOR.textMap(["off": .text("0"), "len": .unsigned(1), "data": .bytes([1])]),
      .textMap(["off": .unsigned(0), "len": .unsigned(1), "data": .text("x")]),
      .textMap(["off": .unsigned(0), "len": .text("1"), "data": .bytes([1])]),
      .textMap(["off": .unsigned(0), "len": .unsigned(1), "data": .bytes([1]), "sha": .text("x")]),
      .array([]),
    ] {
      let request = SMPHeader(
        operation: .write, version: 0, length: UInt16(body.encoded.count), group: 1, sequence: 0, command: 1)
      #expect(
        answer(HexNotation.string(request.encoded + body.encoded)) == "0300000500010001a162726303", "\(body)")
    }
  }

  @Test func unknownKeysAreIgnored() {
    // [S-ERR-3]
    // {"d": "hi", "x": [1]} -> {"r": "hi"}
    #expect(answer("0200000a00000100" + "a26164626869617881" + "01") == "0300000600000100" + "a16172626869")
  }
}

extension String {
  var compact: String { filter { $0 != " " } }
}

/// Reading the slots' images may hash both slots: only image state asks for them; an upload chunk,
/// echo, OS info and bootloader info answer without reading a slot.
@Suite struct SMPDeviceViewReadTests {
  final class Reads {
    var count = 0
  }

  @Test func onlyImageStateReadsTheSlots() {
    // [SEC-LIMIT-6]
    let server = SMPServer()
    let reads = Reads()
    let facts = SMPDeviceFacts(downgradesRefused: true)
    func images() -> [SMPImageSlot] {
      reads.count += 1
      return []
    }
    let upload = "a4636f666600636c656e0a6464617461430102036775706772616465f4"
    for message in [
      "0a00001d00010501" + upload,  // upload
      "0200000600000100a16164626869",  // echo
      "0000000000000506",  // reset
      "0000000000000007",  // OS info
      "0000000000000008",  // bootloader info
      "0000000000000006",  // parameters
    ] {
      _ = server.handle(HexNotation.bytes(message), facts: facts, images: images)
    }
    #expect(reads.count == 0)
    _ = server.handle(HexNotation.bytes("0800000000010300"), facts: facts, images: images)
    #expect(reads.count == 1, "image state read")
  }
}
