import OTASMP
import OTATestSupport
import Testing

/// SMP over Bluetooth has no framing but the header's length, and a central may cut its writes
/// anywhere: the assembler must give the same messages however the stream is cut.
@Suite struct SMPFrameAssemblerSplitTests {
  /// A read with a body, a write with an empty body, a write with a longer body: three messages.
  static let messages: [[UInt8]] = [
    HexNotation.bytes("0a000006 00000100 a16164626869"),
    HexNotation.bytes("08000000 00000206"),
    HexNotation.bytes("0200000a 00000300 a26164626869617881 01"),
  ]

  @Test func smpFrameAssemblerGivesTheSameMessagesHoweverTheStreamIsCut() {
    // [S-BLE-4]
    let findings = DecoderVerifier.streamingFindings(
      Self.messages.flatMap { $0 }, expected: Self.messages, makeDecoder: { SMPFrameAssembler(maxBody: 64) }
    ) { assembler, bytes throws(SMPFrameError) in
      try assembler.append(bytes)
    }
    #expect(findings.isEmpty, "\(findings)")
  }
}
