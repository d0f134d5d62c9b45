import OTALink
import OTATestSupport
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

  /// A stream socket may split or merge frames anywhere: the link's frame decoder gives the same
  /// frames at every two-part split of the whole stream and fed one byte at a time.
  @Test func linkFrameDecoderGivesTheSameFramesHoweverTheStreamIsCut() {
    let findings = DecoderVerifier.streamingFindings(
      Self.frames.flatMap(\.encoded), expected: Self.frames, makeDecoder: FrameDecoder.init
    ) { decoder, bytes throws(LinkError) in
      decoder.append(bytes)
      var frames: [LinkFrame] = []
      while let frame = try decoder.next() { frames.append(frame) }
      return frames
    }
    #expect(findings.isEmpty, "\(findings)")
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
