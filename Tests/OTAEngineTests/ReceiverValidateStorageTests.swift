import Testing

@testable import OTAEngine
@testable import OTAWire

/// docs/PROTOCOL.md, VALIDATE: "0x07 and 0x0B storage error keep it": a VALIDATE whose read of the
/// slot fails answers storage error and leaves the transfer complete, so the next VALIDATE passes.
extension ReceiverEngineTests {
  @Test mutating func aStorageErrorAtValidateKeepsTheTransfer() {
    // [P-VAL-8]
    var script = prepared()
    _ = script.take()
    for start in stride(from: 0, to: 1000, by: 256) {
      let end = min(start + 256, 1000)
      stream(&script, start..<end)
      script.send(window(start, end - start))
    }
    _ = script.take()
    script.failNext = { if case .checkImage = $0 { true } else { false } }
    script.send(.validate)
    #expect(script.take() == [Response(.validate, .storageError)])
    #expect(script.engine.transferStatus.state == .receiving)
    #expect(script.engine.transferStatus.committedOffset == 1000)
    #expect(script.journal != nil)
    script.send(.validate)
    #expect(script.take() == [Response(.validate, .success)])
  }
}
