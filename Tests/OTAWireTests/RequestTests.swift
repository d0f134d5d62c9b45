import Testing

@testable import OTAWire

@Suite struct RequestTests {
  @Test func prepareDecodesFromBytes() throws {
    // [P-INT-1]
    let bytes: [UInt8] = [
      0x01,  // PREPARE
      0x00, 0x10, 0x00, 0x00,  // size 4096
      0x26, 0x39, 0xF4, 0xCB,  // crc32 0xCBF43926
      0x01, 0x02, 0x03, 0x00, 0x04, 0x00, 0x00, 0x00,  // version 1.2.3+4
    ]
    let request = try Request(bytes: bytes)
    #expect(
      request
        == .prepare(
          size: 4096, crc32: 0xCBF4_3926, version: Version(major: 1, minor: 2, revision: 3, build: 4)))
    #expect(request.encoded == bytes)
  }

  @Test func windowDecodesFromBytes() throws {
    let bytes: [UInt8] = [
      0x03,  // WINDOW
      0x00, 0x80, 0x00, 0x00,  // offset 32768
      0x00, 0x40, 0x00, 0x00,  // length 16384
      0xEF, 0xBE, 0xAD, 0xDE,  // crc32 0xDEADBEEF
    ]
    #expect(try Request(bytes: bytes) == .window(offset: 32768, length: 16384, crc32: 0xDEAD_BEEF))
  }

  @Test func shortRequestsAreOneByte() throws {
    #expect(try Request(bytes: [0x02]) == .status)
    #expect(try Request(bytes: [0x04]) == .validate)
    #expect(try Request(bytes: [0x06]) == .abort)
    #expect(try Request(bytes: [0x07]) == .confirm)
    #expect(try Request(bytes: [0x05, 0x00]) == .activate(permanent: false))
    #expect(try Request(bytes: [0x05, 0x01]) == .activate(permanent: true))
  }

  @Test func everyOpcodeAtEveryWrongLengthIsInvalidLength() {
    // [P-REQ-11]
    for opcode in Opcode.allCases {
      let valid = Request.payloadLength(of: opcode)
      for length in 0...19 where length != valid {
        let bytes = [opcode.rawValue] + [UInt8](repeating: 0, count: length)
        #expect(throws: WireError.self) { try Request(bytes: bytes) }
        do {
          _ = try Request(bytes: bytes)
        } catch {
          #expect(error.status == .invalidLength, "\(opcode) with \(length) payload bytes")
        }
      }
    }
  }

  @Test func unknownOpcodesAreNamed() {
    let known = Set(Opcode.allCases.map(\.rawValue))
    for raw in UInt8.min...UInt8.max where !known.contains(raw) {
      do {
        _ = try Request(bytes: [raw, 0, 0])
        Issue.record("opcode \(raw) decoded")
      } catch {
        #expect(error == .unknownOpcode(raw))
        #expect(error.status == .unknownOpcode)
      }
    }
  }

  @Test func emptyWriteIsInvalidLength() {
    #expect(throws: WireError.truncated(needed: 1, available: 0)) { try Request(bytes: []) }
  }

  @Test func activateRejectsReservedFlagBits() {
    for flags in UInt8(2)...UInt8.max {
      #expect(throws: WireError.self) { try Request(bytes: [0x05, flags]) }
    }
  }

  @Test func everyRequestRoundTripsAndEveryPrefixIsRefused() throws {
    // [P-INT-2]
    let requests: [Request] = [
      .prepare(size: 1, crc32: 2, version: Version(major: 9, minor: 8, revision: 700, build: 65536)),
      .status, .window(offset: 0, length: 1, crc32: 0), .validate, .activate(permanent: true), .abort,
      .confirm,
    ]
    for request in requests {
      let bytes = request.encoded
      #expect(bytes.count <= 20, "every command fits MTU 23")
      #expect(try Request(bytes: bytes) == request)
      for cut in 0..<bytes.count {
        #expect(throws: WireError.self) { try Request(bytes: bytes[0..<cut]) }
      }
    }
  }
}
