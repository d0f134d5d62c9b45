import Testing

@testable import OTAWire

@Suite struct ResponseTests {
  @Test func prepareSuccessCarriesCapacityAndChunkSize() throws {
    // [P-RESP-2]
    let bytes: [UInt8] = [
      0x60, 0x01, 0x00,  // response to PREPARE, success
      0x00, 0x00, 0x01, 0x00,  // window capacity 65536
      0xFA, 0x01,  // max chunk payload 506
    ]
    let response = try Response(bytes: bytes)
    #expect(response == Response(.prepare, .success, .prepared(windowCapacity: 65536, maxChunkPayload: 506)))
    #expect(response.encoded == bytes)
  }

  @Test func statusSuccessCarriesTheTransfer() throws {
    // [P-RESP-3]
    let bytes: [UInt8] = [
      0x60, 0x02, 0x00,  // response to STATUS, success
      0x02,  // receiving
      0x00, 0x00, 0x10, 0x00,  // size 1 MiB
      0x78, 0x56, 0x34, 0x12,  // crc32
      0x00, 0x80, 0x00, 0x00,  // committed 32768
    ]
    let expected = TransferStatus(
      state: .receiving, size: 1 << 20, crc32: 0x1234_5678, committedOffset: 32768)
    #expect(try Response(bytes: bytes) == Response(.status, .success, .status(expected)))
  }

  @Test func windowAnswersCarryAnOffsetEitherWay() throws {
    // [P-RESP-4] [P-WIN-1]
    #expect(
      try Response(bytes: [0x60, 0x03, 0x00, 0x10, 0, 0, 0]) == Response(.window, .success, .offset(16)))
    #expect(
      try Response(bytes: [0x60, 0x03, 0x07, 0x20, 0, 0, 0]) == Response(.window, .missingData, .offset(32)))
    #expect(throws: WireError.self) { try Response(bytes: [0x60, 0x03, 0x06]) }
  }

  @Test func failuresHaveNoPayload() throws {
    // [P-RESP-7]
    #expect(try Response(bytes: [0x60, 0x01, 0x05]) == Response(.prepare, .tooLarge))
    #expect(try Response(bytes: [0x60, 0x99, 0x01]) == Response(requestOpcode: 0x99, status: .unknownOpcode))
    #expect(throws: WireError.trailingBytes(count: 1)) { try Response(bytes: [0x60, 0x04, 0x08, 0x00]) }
  }

  @Test func badMarkerAndStatusAreRefused() throws {
    #expect(throws: WireError.self) { try Response(bytes: [0x61, 0x02, 0x00]) }
    #expect(throws: WireError.self) { try Response(bytes: [0x60, 0x02, 0x10]) }
    // [P-RESP-8]
    #expect(try Response(bytes: [0x60, 0x04, 0x0D]) == Response(.validate, .cannotDecrypt))
  }

  @Test func everyResponseFitsMTU23AndEveryPrefixIsRefused() throws {
    // [P-INT-2]
    var responses: [Response] = StatusCode.allCases.map { Response(.abort, $0) }
    responses += [
      Response(.prepare, .success, .prepared(windowCapacity: 1, maxChunkPayload: 2)),
      Response(.status, .success, .status(.idle)),
      Response(.window, .crcMismatch, .offset(77)),
    ]
    for response in responses {
      let bytes = response.encoded
      #expect(bytes.count <= 20)
      #expect(try Response(bytes: bytes) == response)
      for cut in 0..<bytes.count {
        #expect(throws: WireError.self) { try Response(bytes: bytes[0..<cut]) }
      }
    }
  }
}
