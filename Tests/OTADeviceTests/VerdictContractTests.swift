import OTAChecksum
import OTATrust
import OTAWire
import Testing

/// docs/PROTOCOL.md's VALIDATE verdicts as the bytes of their answers, and ACTIVATE's permanent
/// bit: what the boot state does with it.
@Suite struct VerdictContractTests {
  typealias Contract = ProtocolContractTests

  /// PREPAREs `image` as 2.0.0 and sends it, window by window, in the raw bytes of the protocol;
  /// every WINDOW must pass (its CRC is the bytes' own).
  static func uploaded(_ image: [UInt8], policy: ImagePolicy) throws -> ProtocolBench {
    var bench = try ProtocolBench(policy: policy)
    let prepared = try bench.controlBytes(
      Contract.prepare(size: UInt32(image.count), crc32: CRC32.checksum(image)))
    #expect(prepared.first?.prefix(3) == [0x60, 0x01, 0x00])
    for start in stride(from: 0, to: image.count, by: 4096) {
      let end = min(start + 4096, image.count)
      for offset in stride(from: start, to: end, by: 200) {
        try bench.data(Contract.chunk(UInt32(offset), image[offset..<min(offset + 200, end)]))
      }
      let window = Contract.window(UInt32(start), UInt32(end - start), CRC32.checksum(image[start..<end]))
      #expect(try bench.controlBytes(window) == [Contract.windowAnswer(0x00, UInt32(end))])
    }
    return bench
  }

  @Test func aDamagedMCUbootImageIsAnsweredValidationFailed() throws {
    // [P-VAL-3] [P-RESP-8]
    var image = try AttackTests.image(key: nil)
    image[image.count / 2] ^= 0x01  // in the payload: its SHA-256 no longer matches
    var bench = try Self.uploaded(image, policy: ImagePolicy())
    #expect(try bench.controlBytes([0x04]) == [[0x60, 0x04, 0x08]])
  }

  @Test func anImageNoTrustedKeySignedIsAnsweredSignatureInvalid() throws {
    // [P-VAL-4] [P-RESP-8]
    let image = try AttackTests.image(key: AttackTests.stranger)
    var bench = try Self.uploaded(image, policy: AttackTests.signed)
    #expect(bench.host.info().flags.contains(.signaturesRequired))
    #expect(try bench.controlBytes([0x04]) == [[0x60, 0x04, 0x09]])
  }

  @Test func aPermanentActivationConfirmsTheNewSlotWithoutATrial() throws {
    // [P-REQ-5]
    var bench = try ProtocolBench()
    let image = Array(Contract.image[0..<600])
    #expect(try bench.push(image, version: Contract.version) == .success)
    #expect(try bench.controlBytes([0x05, 0x01]) == [[0x60, 0x05, 0x00]])
    #expect(bench.host.boot.confirmed == .b && bench.host.boot.trial == nil)
    #expect(bench.host.boot.outcome.result == .succeeded)
    // After the restart the new slot runs confirmed at once, with no trial to roll it back.
    try bench.restart(verdict: .fails)
    let info = bench.host.info()
    #expect(info.runningSlot == .b && !info.flags.contains(.runningOnTrial))
    // Without the bit the same push arms a trial instead.
    var trial = try ProtocolBench()
    #expect(try trial.push(image, version: Contract.version) == .success)
    #expect(try trial.controlBytes([0x05, 0x00]) == [[0x60, 0x05, 0x00]])
    #expect(trial.host.boot.confirmed == .a && trial.host.boot.trial?.slot == .b)
  }

  @Test func theSignatureIsJudgedBeforeTheCounterAndTheVersion() throws {
    // [P-VAL-6]
    var bench = try ProtocolBench(policy: AttackTests.signed)
    try bench.install(try AttackTests.image(AttackTests.v2, counter: 7), version: AttackTests.v2)
    // v3 with an older counter: by a stranger it is a bad signature, not a downgrade; by the
    // release key it is the downgrade it is.
    let stranger = try AttackTests.image(AttackTests.v3, key: AttackTests.stranger, counter: 5)
    #expect(try bench.push(stranger, version: AttackTests.v3) == .signatureInvalid)
    #expect(
      try bench.push(try AttackTests.image(AttackTests.v3, counter: 5), version: AttackTests.v3)
        == .downgradeRefused)
  }

  @Test func validateOfAValidatedTransferAnswersSuccessAgain() throws {
    // [P-VAL-9]
    var bench = try ProtocolBench()
    #expect(try bench.push(Array(Contract.image[0..<600]), version: Contract.version) == .success)
    #expect(try bench.controlBytes([0x04]) == [[0x60, 0x04, 0x00]])
    #expect(try bench.controlBytes([0x02]).first?.prefix(4) == [0x60, 0x02, 0x00, 3], "still validated")
  }
}
