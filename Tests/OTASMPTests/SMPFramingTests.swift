import OTASMP
import Testing

@Suite struct SMPFramingTests {
  @Test func theHeaderIsEightBytesBigEndian() throws {
    // [S-HDR-1] [S-HDR-2]
    let header = SMPHeader(
      operation: .write, version: 1, flags: 0, length: 0x0102, group: 0x0304, sequence: 5, command: 6)
    #expect(header.encoded == [0x0A, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06])
    #expect(try SMPHeader(bytes: header.encoded) == header)
    #expect(throws: SMPFrameError.truncatedHeader(count: 7)) {
      try SMPHeader(bytes: [UInt8](repeating: 0, count: 7))
    }
  }

  @Test func theReservedBitsAreIgnored() throws {
    let header = try SMPHeader(bytes: [0xE2, 0, 0, 0, 0, 0, 0, 0])
    #expect(header.operation == .write)
    #expect(header.version == 0)
  }

  @Test func messagesAreReassembledByTheHeadersLength() throws {
    // [S-BLE-4]
    var assembler = SMPFrameAssembler(maxBody: 64)
    let first: [UInt8] = [0x0A, 0, 0, 3, 0, 0, 1, 0, 0xA1, 0x61, 0x64]
    let second: [UInt8] = [0x08, 0, 0, 0, 0, 0, 2, 6]
    let stream = first + second
    #expect(try assembler.append(stream[0..<5]) == [])
    #expect(assembler.pending == 5)
    #expect(try assembler.append(stream[5..<10]) == [])
    #expect(try assembler.append(stream[10...]) == [first, second])
    #expect(assembler.pending == 0)
  }

  @Test func aHeaderAnnouncingTooMuchIsRefusedAtOnce() {
    var assembler = SMPFrameAssembler(maxBody: 64)
    #expect(throws: SMPFrameError.tooLarge(announced: 65, limit: 64)) {
      try assembler.append([0x0A, 0, 0, 65, 0, 0, 1, 0])
    }
    #expect(assembler.pending == 0)
  }
}

@Suite struct SMPFrameAssemblerRefusalTests {
  @Test func aHeaderAnnouncingTooMuchIsKeptToAnswerIt() throws {
    var assembler = SMPFrameAssembler(maxBody: 16)
    let header: [UInt8] = [0x02, 0, 0x00, 0x11, 0, 1, 9, 1]
    #expect(throws: SMPFrameError.tooLarge(announced: 17, limit: 16)) {
      try assembler.append(header[0..<3] + header[3...] + [0xA0])
    }
    #expect(assembler.refusedHeader == header)
    #expect(assembler.pending == 0)
  }

  @Test func aPartialMessageIsHandedOverOnceAndForgotten() throws {
    var assembler = SMPFrameAssembler(maxBody: 64)
    #expect(try assembler.append([0x0A, 0, 0, 3, 0, 0, 1, 0, 0xA1]) == [])
    #expect(assembler.takePending() == [0x0A, 0, 0, 3, 0, 0, 1, 0, 0xA1])
    #expect(assembler.pending == 0)
    #expect(assembler.takePending() == [])
  }
}
