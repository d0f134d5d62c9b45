import OTABoot
import OTAChecksum
import OTAJournal
import OTALink
import OTASocketLink
import OTAStorage
import OTATrust
import OTAWire
import Testing

/// The attack table of docs/SECURITY.md, row by row: a hostile or broken central sends something
/// bad; the device answers with a status, and nothing is lost (the confirmed image untouched, no
/// trial armed, the bootloader told nothing new).
@Suite struct AttackTests {
  static let release = ImageSigningKey.generate(.ed25519)
  static let stranger = ImageSigningKey.generate(.ed25519)
  static let releaseP256 = ImageSigningKey.generate(.ecdsaP256)
  static let v2 = Version(major: 2, minor: 0, revision: 0)
  static let v3 = Version(major: 3, minor: 0, revision: 0)
  static let payload = DeviceFixture.image(size: 9000, seed: 0x5EC)

  static var signed: ImagePolicy { ImagePolicy(trustedKeys: [release.publicKey, releaseP256.publicKey]) }

  static func image(
    _ version: Version = v2, key: ImageSigningKey? = release, counter: UInt32? = nil,
    payload: [UInt8] = payload
  ) throws -> [UInt8] {
    try MCUbootImageBuilder(version: version, securityCounter: counter.map { .value($0) })
      .build(payload: payload, signingKey: key)
  }

  /// Pushes `image` to a fresh device with `policy`; expects `status`, and nothing lost.
  static func expectRefused(
    _ image: [UInt8], version: Version = v2, policy: ImagePolicy = signed, status: StatusCode,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    var bench = try ProtocolBench(policy: policy)
    let before = bench.snapshot
    #expect(try bench.push(image, version: version) == status, sourceLocation: sourceLocation)
    #expect(
      bench.host.lastImageRejection != nil || status != .signatureInvalid, sourceLocation: sourceLocation)
    #expect(
      try bench.answer(.activate(permanent: false)).status == .invalidState, sourceLocation: sourceLocation)
    #expect(bench.losses(since: before).isEmpty, sourceLocation: sourceLocation)
  }

  /// The image layout's offsets, to flip bits where they matter.
  static func layout(_ image: [UInt8]) throws -> MCUbootImageLayout { try MCUbootImageLayout(parsing: image) }

  static func flipping(_ image: [UInt8], at offset: Int) -> [UInt8] {
    var copy = image
    copy[offset] ^= 0x01
    return copy
  }

  // MARK: Signatures

  @Test func aTrustedSignatureIsAcceptedAndActivated() throws {
    // [SEC-SIG-1]
    for key in [Self.release, Self.releaseP256] {
      var bench = try ProtocolBench(policy: Self.signed)
      #expect(try bench.push(try Self.image(key: key), version: Self.v2) == .success)
      #expect(try bench.answer(.activate(permanent: false)).status == .success)
      #expect(bench.host.boot.trial?.slot == .b)
      #expect(bench.host.info().flags.contains(.signaturesRequired))
    }
  }

  @Test func wrongKey() throws {
    // [P-VAL-4] [SEC-CHECK-11] [SEC-SIG-1] [SEC-ATK-1]
    try Self.expectRefused(try Self.image(key: Self.stranger), status: .signatureInvalid)
  }

  @Test func unsignedMCUbootImage() throws {
    // [P-VAL-4] [SEC-SIG-1] [SEC-ATK-2]
    try Self.expectRefused(try Self.image(key: nil), status: .signatureInvalid)
  }

  @Test func rawImage() throws {
    // [P-VAL-4] [SEC-SIG-1] [SEC-ATK-3]
    try Self.expectRefused(Self.payload, status: .signatureInvalid)
  }

  @Test func flippedBitInThePayload() throws {
    // [P-VAL-3] [SEC-CHECK-11] [SEC-ATK-4]
    let image = try Self.image()
    let payload = try Self.layout(image).payloadRange
    try Self.expectRefused(
      Self.flipping(image, at: Int(payload.lowerBound) + 1234), status: .validationFailed)
  }

  @Test func flippedBitInTheHeader() throws {
    // [P-VAL-3] [SEC-ATK-5]
    // load_addr: changes neither sizes nor version, only the hash.
    try Self.expectRefused(Self.flipping(try Self.image(), at: 4), status: .validationFailed)
  }

  @Test func flippedBitInTheProtectedTLVs() throws {
    // [SEC-ATK-6]
    let image = try Self.image(counter: 9)
    let protected = try Self.layout(image).protectedTLVRange
    try Self.expectRefused(Self.flipping(image, at: Int(protected.upperBound) - 1), status: .validationFailed)
  }

  @Test func flippedBitInTheSignatureOrKeyHash() throws {
    // [P-VAL-4] [SEC-ATK-7]
    let image = try Self.image()
    let end = image.count
    // The unprotected area ends KEYHASH (4 + 32), ED25519 (4 + 64).
    try Self.expectRefused(Self.flipping(image, at: end - 1), status: .signatureInvalid)
    try Self.expectRefused(Self.flipping(image, at: end - 68 - 1), status: .signatureInvalid)
  }

  @Test func truncatedImage() throws {
    // [P-VAL-3] [SEC-CHECK-11] [SEC-LIMIT-1] [SEC-ATK-8]
    let image = try Self.image()
    try Self.expectRefused(Array(image.dropLast(40)), status: .validationFailed)
  }

  // MARK: Sizes

  @Test func oversizeClaimInPrepare() throws {
    // [SEC-CHECK-3] [SEC-LIMIT-1] [SEC-ATK-9]
    var bench = try ProtocolBench(policy: Self.signed)
    let before = bench.snapshot
    let capacity = UInt32(bench.host.engine.configuration.slotCapacity)
    for size in [capacity + 1, UInt32.max] {
      #expect(try bench.push(try Self.image(), version: Self.v2, claimedSize: size) == .tooLarge)
    }
    #expect(bench.losses(since: before).isEmpty)
  }

  @Test func oversizeClaimInTheHeader() throws {
    // [SEC-CHECK-11] [SEC-LIMIT-1] [SEC-ATK-10]
    var image = try Self.image()
    // img_size (offset 12) claims 16 MiB more than the image holds.
    image[14] ^= 0x01
    try Self.expectRefused(image, status: .validationFailed)
  }

  // MARK: Versions

  @Test func downgradeIsRefusedAtPrepareAndAtValidate() throws {
    // [P-VAL-5] [P-PREP-1] [SEC-CHECK-3] [SEC-CHECK-11] [SEC-DOWN-1] [SEC-ATK-11] [SEC-ATK-12]
    var bench = try ProtocolBench(policy: Self.signed)
    try bench.install(try Self.image(Self.v3), version: Self.v3)
    let before = bench.snapshot
    // Honest central: refused before a byte moves.
    #expect(try bench.push(try Self.image(Self.v2), version: Self.v2) == .downgradeRefused)
    // Lying central (PREPARE claims 4.0.0): the signed header says 2.0.0.
    let claimed = Version(major: 4, minor: 0, revision: 0)
    #expect(
      try bench.push(try Self.image(Self.v2), version: Self.v2, claimedVersion: claimed) == .validationFailed)
    #expect(bench.losses(since: before).isEmpty)
  }

  @Test func replayOfAnOldSignedImage() throws {
    // [SEC-DOWN-1] [SEC-ATK-13]
    var bench = try ProtocolBench(policy: Self.signed)
    let old = try Self.image(Self.v2)
    try bench.install(old, version: Self.v2)
    try bench.install(try Self.image(Self.v3), version: Self.v3)
    let before = bench.snapshot
    #expect(try bench.push(old, version: Self.v2) == .downgradeRefused)
    #expect(bench.losses(since: before).isEmpty)
  }

  @Test func downgradeIsAcceptedWhenTheConfigAllowsIt() throws {
    // [P-VAL-5] [SEC-DOWN-1] [SEC-ATK-14]
    var policy = Self.signed
    policy.allowDowngrade = true
    var bench = try ProtocolBench(policy: policy)
    try bench.install(try Self.image(Self.v3), version: Self.v3)
    try bench.install(try Self.image(Self.v2), version: Self.v2)
    #expect(bench.host.boot[bench.host.boot.confirmed].version == Self.v2)
  }

  @Test func securityCounterNeverGoesBackwards() throws {
    // [P-VAL-5] [SEC-CHECK-11] [SEC-DOWN-2] [SEC-ATK-15]
    var policy = Self.signed
    policy.allowDowngrade = true
    var bench = try ProtocolBench(policy: policy)
    try bench.install(try Self.image(Self.v2, counter: 7), version: Self.v2)
    #expect(bench.host.boot.securityFloor == 7)
    let before = bench.snapshot
    // A newer version with an older counter, even with downgrades allowed.
    #expect(try bench.push(try Self.image(Self.v3, counter: 5), version: Self.v3) == .downgradeRefused)
    #expect(try bench.push(try Self.image(Self.v3), version: Self.v3) == .downgradeRefused)
    #expect(bench.losses(since: before).isEmpty)
    try bench.install(try Self.image(Self.v3, counter: 7), version: Self.v3)
    #expect(bench.host.boot.securityFloor == 7)
  }

  @Test func aTrialThatRollsBackDoesNotRaiseTheFloor() throws {
    // [SEC-DOWN-2] [SEC-ATK-16]
    var bench = try ProtocolBench(policy: Self.signed)
    bench.fixture.attempts = 1
    #expect(try bench.push(try Self.image(Self.v2, counter: 9), version: Self.v2) == .success)
    #expect(try bench.answer(.activate(permanent: false)).status == .success)
    bench = try bench.restarted(verdict: .fails)
    #expect(bench.host.boot.outcome.result == .rolledBack)
    #expect(bench.host.boot.securityFloor == 0)
  }

  // MARK: Protocol

  @Test func outOfWindowChunksAreDroppedAndNeverWritten() throws {
    // [P-DATA-4] [SEC-CHECK-4] [SEC-ATK-17]
    var bench = try ProtocolBench(policy: Self.signed)
    let before = bench.snapshot
    let image = try Self.image()
    let prepared = try bench.answer(
      .prepare(size: UInt32(image.count), crc32: CRC32.checksum(image), version: Self.v2))
    #expect(prepared.status == .success)
    let span = bench.host.engine.configuration.receiveSpan
    let capacity = UInt32(bench.host.engine.configuration.slotCapacity)
    let bad: [UInt32] = [
      span, span + 1, UInt32(image.count), capacity, capacity - 2, UInt32.max - 3, UInt32.max,
    ]
    for offset in bad {
      try bench.data(DataChunk(offset: offset, payload: [1, 2, 3, 4, 5, 6, 7, 8][...]).encoded)
    }
    // Too short to carry an offset and a byte.
    for length in 0...4 { try bench.data(Array(repeating: 0xAB, count: length)) }
    #expect(bench.host.engine.statistics.chunksDropped == bad.count + 5)
    #expect(bench.host.engine.statistics.chunksStored == 0)
    #expect(bench.fixture.medium.slotBytes(.b).allSatisfy { $0 == 0 })
    // A WINDOW outside the image or larger than the window capacity is refused too.
    for request in [
      Request.window(offset: 0, length: bench.host.engine.configuration.windowCapacity + 1, crc32: 0),
      .window(offset: UInt32.max - 10, length: 100, crc32: 0),
      .window(offset: 0, length: 0, crc32: 0),
    ] {
      #expect(try bench.answer(request).status == .invalidParameter)
    }
    #expect(try bench.answer(.validate).status == .missingData)
    #expect(bench.losses(since: before).isEmpty)
  }

  @Test func everyOpcodeWithEveryWrongLength() throws {
    // [SEC-CHECK-2] [SEC-ATK-20]
    var bench = try ProtocolBench(policy: Self.signed)
    let before = bench.snapshot
    var tried = 0
    for opcode in 0...255 {
      let known = Opcode(rawValue: UInt8(opcode))
      for length in 0...20 where known.map({ Request.payloadLength(of: $0) != length }) ?? true {
        let answers = try bench.control([UInt8(opcode)] + Array(repeating: 0x5A, count: length))
        #expect(answers.count == 1)
        #expect(answers.first?.requestOpcode == UInt8(opcode))
        #expect(answers.first?.status == (known == nil ? .unknownOpcode : .invalidLength))
        tried += 1
      }
    }
    // ACTIVATE's reserved flag bits.
    for flags: UInt8 in [0x02, 0x80, 0xFF] {
      #expect(try bench.control([Opcode.activate.rawValue, flags]).first?.status == .invalidParameter)
    }
    #expect(try bench.control([]).first?.status == .invalidLength)
    // Ten opcodes, each with one right length among 0...20; the other 246 at every length.
    #expect(tried == 10 * 20 + 246 * 21)
    #expect(bench.losses(since: before).isEmpty)
  }

  // MARK: Stored state

  @Test func aGarbageJournalIsMovedAside() throws {
    // [P-DISK-1] [SEC-CHECK-14] [SEC-ATK-21]
    var bench = try ProtocolBench(policy: Self.signed)
    let before = bench.snapshot
    var generator = SeededGenerator(seed: 0x6A4B)
    let names = [TransferJournalStore.fileName, TransferJournalStore.legacyFileName]
    for name in names {
      for size in [0, 1, TransferJournal.byteCount - 1, TransferJournal.byteCount, 4096, 8192] {
        let garbage = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try bench.fixture.medium.replace(name, with: garbage)
        try bench.restart()
        #expect(bench.host.engine.phase == .idle)
        #expect(try bench.fixture.medium.load(name) == nil)
        #expect(try bench.fixture.medium.load(name + ".damaged") == garbage)
        #expect(bench.host.startNotices.count == 1 && bench.host.startNotices[0].contains("moved aside"))
      }
    }
    #expect(bench.losses(since: before).isEmpty)
  }

  @Test func aWellFormedJournalThatLiesIsNotTrusted() throws {
    // [SEC-CHECK-14] [SEC-LIMIT-3] [SEC-ATK-22]
    var bench = try ProtocolBench(policy: Self.signed)
    let before = bench.snapshot
    let capacity = UInt32(bench.host.engine.configuration.slotCapacity)
    let lies = [
      // The running slot as the target.
      TransferJournal(slot: .a, state: .receiving, size: 100, crc32: 0, version: Self.v2, committedOffset: 0),
      // Larger than the slot.
      TransferJournal(
        slot: .b, state: .receiving, size: capacity + 1, crc32: 0, version: Self.v2, committedOffset: 0),
    ]
    for journal in lies {
      for (name, bytes) in DeviceFixture.journalFiles(journal) {
        try bench.fixture.medium.replace(name, with: bytes)
        try bench.restart()
        #expect(bench.host.engine.phase == .idle, "\(name)")
        #expect(try bench.answer(.activate(permanent: false)).status == .invalidState)
      }
    }
    #expect(bench.losses(since: before).isEmpty)
  }

  @Test func activateIsImpossibleWithoutAValidSignature() throws {
    // [P-ACT-1] [SEC-CHECK-12] [SEC-ATK-23]
    // A journal that says "validated" over a slot that holds an unsigned image (written there by
    // anything but VALIDATE): ACTIVATE checks again and refuses.
    var bench = try ProtocolBench(policy: Self.signed)
    let before = bench.snapshot
    let unsigned = try Self.image(key: nil)
    bench.fixture.medium.fill(.b, with: unsigned)
    let journal = TransferJournal(
      slot: .b, state: .validated, size: UInt32(unsigned.count), crc32: CRC32.checksum(unsigned),
      version: Self.v2,
      committedOffset: UInt32(unsigned.count))
    try bench.fixture.medium.replace(
      TransferJournalStore.fileName, with: DeviceFixture.inPlaceJournal(journal))
    try bench.restart()
    #expect(bench.host.engine.phase == .validated(journal))
    #expect(try bench.answer(.activate(permanent: true)).status == .signatureInvalid)
    #expect(bench.host.engine.phase == .idle)
    #expect(bench.losses(since: before).isEmpty)
  }

  @Test func keysTrustedAfterValidationStillGuardActivate() throws {
    // [P-ACT-1] [SEC-CHECK-12] [SEC-SIG-1] [SEC-ATK-24]
    // Validated without keys, then the device restarts with keys: ACTIVATE refuses.
    var bench = try ProtocolBench(policy: ImagePolicy())
    #expect(try bench.push(try Self.image(key: Self.stranger), version: Self.v2) == .success)
    let before = bench.snapshot
    bench.fixture.policy = Self.signed
    try bench.restart()
    #expect(try bench.answer(.activate(permanent: false)).status == .signatureInvalid)
    #expect(bench.losses(since: before).isEmpty)
  }
}

extension ProtocolBench {
  /// A restart whose trial boots all get `verdict`.
  func restarted(verdict: DeviceFixture.TrialVerdict) throws -> ProtocolBench {
    var copy = self
    try copy.restart(verdict: verdict)
    return copy
  }
}
