import OTALink
import Testing

@testable import OTASocketLink

@Suite struct LinkFrameTests {
  static let frames: [LinkFrame] = [
    .hello(mtu: 517), .welcome(mtu: 247), .busy,
    .writeRequest(handle: 1, value: [0x01, 0x02, 0x03]), .writeResponse(status: 0x0D),
    .writeCommand(handle: 2, value: Array(0..<200)), .readRequest(handle: 3, offset: 22),
    .readResponse(status: 0, value: Array(repeating: 7, count: 22)),
    .notification(handle: 1, value: [0x60, 0x02, 0x00]),
    .writeCommand(handle: 2, value: Array(repeating: 0xFF, count: 510)),
  ]

  @Test func frameBytesAreLengthTypeFields() {
    #expect(LinkFrame.hello(mtu: 517).encoded == [0x03, 0x00, 0x01, 0x05, 0x02])
    #expect(LinkFrame.writeRequest(handle: 1, value: [0xAA]).encoded == [0x03, 0x00, 0x10, 0x01, 0xAA])
    #expect(LinkFrame.readRequest(handle: 3, offset: 300).encoded == [0x04, 0x00, 0x13, 0x03, 0x2C, 0x01])
  }

  /// A stream socket may split or merge frames anywhere: every split of the whole stream decodes alike.
  @Test func dripFedStreamsDecodeTheSameFramesAtEverySplit() throws {
    let stream = Self.frames.flatMap(\.encoded)
    for split in 1..<stream.count {
      var decoder = FrameDecoder()
      var decoded: [LinkFrame] = []
      decoder.append(stream[0..<split])
      while let frame = try decoder.next() { decoded.append(frame) }
      decoder.append(stream[split...])
      while let frame = try decoder.next() { decoded.append(frame) }
      #expect(decoded == Self.frames, "split at \(split)")
    }
  }

  @Test func byteByByteDecodesTheSameFrames() throws {
    var decoder = FrameDecoder()
    var decoded: [LinkFrame] = []
    for byte in Self.frames.flatMap(\.encoded) {
      decoder.append([byte])
      while let frame = try decoder.next() { decoded.append(frame) }
    }
    #expect(decoded == Self.frames)
  }

  @Test func garbageIsAProtocolViolation() {
    for bad: [UInt8] in [[0x00, 0x00], [0xFF, 0xFF, 0x01], [0x01, 0x00, 0x99], [0x02, 0x00, 0x01, 0x05]] {
      var decoder = FrameDecoder()
      decoder.append(bad)
      #expect(throws: LinkError.self, "\(bad)") {
        while try decoder.next() != nil {}
      }
    }
  }
}
