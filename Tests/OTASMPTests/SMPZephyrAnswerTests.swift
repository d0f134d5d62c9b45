import OTACBOR
import OTASMP
import OTATestSupport
import Testing

/// The answers Zephyr's MCUmgr gives, byte for byte: requests built from Zephyr's SMP specification
/// (the 8-byte header; group 0 and group 1 bodies), answers as Zephyr's os_mgmt and img_mgmt encode
/// them. The device-side answers (upload, state, erase) are in OTADeviceTests' SMPZephyrDeviceTests.
@Suite struct SMPZephyrAnswerTests {
  let server = SMPServer()
  let view = SMPDeviceView(
    images: [SMPImageSlot(slot: 0, version: "1.0.0", hash: [UInt8](repeating: 7, count: 32), active: true)],
    downgradesRefused: true)

  func answer(_ hex: String) -> String? {
    guard case .respond(let bytes) = server.handle(HexNotation.bytes(hex), device: view) else { return nil }
    return HexNotation.string(bytes)
  }

  @Test func echoIsAnsweredAsAReadAndAsAWrite() {
    // [S-CMD-1]
    // Group 0 says echo is operation "0 or 2". Read, version 2: 08 00 0006 0000 01 00 {"d": "hi"}
    // -> read response 09 ... {"r": "hi"}.
    #expect(answer("0800000600000100" + "a16164626869") == "0900000600000100" + "a16172626869")
    // Read, version 1.
    #expect(answer("0000000600000200" + "a16164626869") == "0100000600000200" + "a16172626869")
    // Write, as before.
    #expect(answer("0a00000600000300" + "a16164626869") == "0b00000600000300" + "a16172626869")
    // A map without "d" echoes the empty text, as zcbor's bulk decoder leaves it: {"r": ""}.
    #expect(answer("0800000100000400" + "a0") == "0900000400000400" + "a1617260")
  }

  @Test func anInvalidFormatLetterIsTheOSGroupsOwnError() {
    // [S-CMD-4] [S-ERR-1]
    // {"format": "q"}: version 2 {"err": {"group": 0, "rc": 2}} (OS_MGMT_ERR_INVALID_FORMAT);
    // version 1 the generic rc 3 that os_mgmt_translate_error_code gives.
    let body = "a1" + "66666f726d6174" + "6171"
    let v2 = "a1" + "63657272" + "a2" + "6567726f7570" + "00" + "627263" + "02"
    #expect(answer("0800000a00000507" + body) == "0900001100000507" + v2)
    #expect(answer("0000000a00000507" + body) == "0100000500000507" + "a162726303")
    // An empty format is the kernel name, as no format at all: {"output": "Linux"}.
    #expect(
      answer("0800000900000607" + "a166666f726d617460") == "0900000e00000607" + "a1666f7574707574654c696e7578"
    )
  }

  @Test func versionOneHearsZephyrsTranslationOfEveryImageError() {
    // [S-ERR-1]
    // img_mgmt_translate_error_code, case for case.
    let expected: [(SMPImageReturnCode, SMPReturnCode)] = [
      (.unknown, .unknown), (.noImage, .noEntry), (.invalidTLV, .unknown), (.hashNotFound, .unknown),
      (.noFreeSlot, .badState), (.flashWriteFailed, .unknown), (.flashEraseFailed, .unknown),
      (.invalidSlot, .invalidValue), (.invalidOffset, .invalidValue), (.invalidLength, .invalidValue),
      (.invalidImageHeader, .invalidValue), (.invalidImageHeaderMagic, .unknown),
      (.invalidHash, .invalidValue),
      (.currentVersionIsNewer, .badState), (.imageAlreadyPending, .badState), (.imageTooLarge, .unknown),
      (.imageDataOverrun, .unknown), (.imageConfirmationDenied, .unknown),
      (.settingTestToActiveDenied, .unknown),
    ]
    for (code, generic) in expected {
      #expect(code.generic == generic, "\(code)")
      // On the wire: an upload answered with the code, in version 1 and in version 2.
      // {"off": 1, "data": h''}, version 1, sequence 4: handed to the device, whose refusal goes back.
      guard
        case .perform(_, let pending) = server.handle(
          HexNotation.bytes("0200000c00010401a2636f666601646461746140"), device: view)
      else {
        Issue.record("not handed to the device")
        return
      }
      let v1 = server.respond(to: pending, with: .failure(.image(code)))
      #expect(
        HexNotation.string(v1) == "0300000500010401" + "a1627263"
          + HexNotation.string([UInt8(generic.rawValue)]))
    }
    // The two the testers met: too large is 1 (not 7), a downgrade 6 (not 11).
    #expect(SMPImageReturnCode.imageTooLarge.generic.rawValue == 1)
    #expect(SMPImageReturnCode.currentVersionIsNewer.generic.rawValue == 6)
  }

  @Test func anUploadWithoutOffsetIsTheImageGroupsInvalidOffset() {
    // [S-UP-2]
    // {"data": h'01'}: IMG_MGMT_ERR_INVALID_OFFSET (20) in version 2, EINVAL (3) in version 1.
    let body = "a1" + "6464617461" + "4101"
    let v2 = "a1" + "63657272" + "a2" + "6567726f7570" + "01" + "627263" + "14"
    #expect(answer("0a00000800010101" + body) == "0b00001100010101" + v2)
    #expect(answer("0200000800010101" + body) == "0300000500010101" + "a162726303")
  }

  @Test func theFirstChunksOtherFieldsAreLeftToTheDeviceAndAnEmptyShaIsNone() {
    // [S-UP-2]
    // No "len", no "data", an empty "sha": decoded, for the device to check in Zephyr's order.
    let body = CBOR.textMap(["off": .unsigned(0), "sha": .bytes([])])
    let header = SMPHeader(
      operation: .write, length: UInt16(body.encoded.count), group: 1, sequence: 1, command: 1)
    guard case .perform(.upload(let upload), _) = server.handle(header.encoded + body.encoded, device: view)
    else {
      Issue.record("not handed to the device")
      return
    }
    #expect(upload == SMPUpload(offset: 0, length: nil, data: [], sha: nil))
  }

  @Test func aStateWriteWithAnEmptyHashIsOneWithoutAHash() {
    // [S-CMD-7] [S-STATE-2]
    // {"hash": h'', "confirm": true}: Zephyr reads zhash.len == 0 as "no hash": confirm the running image.
    let body = "a2" + "6468617368" + "40" + "67636f6e6669726d" + "f5"
    guard
      case .perform(let command, _) = server.handle(
        HexNotation.bytes("0a00001000010200" + body), device: view)
    else {
      Issue.record("not handed to the device")
      return
    }
    #expect(command == .stateWrite(hash: nil, confirm: true))
  }
}
