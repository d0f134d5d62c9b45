import OTABoot
import OTAChecksum
import OTAStorage
import OTAStorageTesting
import OTATrust
import OTAWire
import Testing

/// The rules that rebuild a lost boot state, one row each (docs/BOOT.md draws them), and the
/// checks of a slot's image that feed them.
@Suite struct BootStateRecoveryTests {
  static let v1 = Version(major: 1, minor: 0, revision: 0)
  static let v2 = Version(major: 2, minor: 0, revision: 0)
  static let v3 = Version(major: 3, minor: 0, revision: 0)

  static func report(_ version: Version, counter: UInt32 = 0) -> ImageReport {
    ImageReport(
      kind: .raw, size: 4096, crc32: 0x1234_5678, version: version, sha256: nil, securityCounter: counter)
  }

  static func evidence(
    _ record: RecoveryEvidence.Record = .missing, pointer: BootPointer = .unknown, journal: SlotID? = nil,
    a: SlotEvidence = .verified(report(v1)), b: SlotEvidence = .verified(report(v2)), damaged: Bool = false
  ) -> RecoveryEvidence {
    RecoveryEvidence(
      record: record, pointer: pointer,
      journal: journal.map { JournalEvidence(slot: $0, summary: "into slot \($0)") },
      slots: SlotPair(a: a, b: b),
      damagedRecordsSeen: damaged, factoryVersion: v1)
  }

  @Test func aFactoryDeviceKeepsSlotAWithTheFactoryVersion() {
    let recovery = BootStateRecovery.recover(
      Self.evidence(pointer: BootPointer(primary: .a), journal: .b, a: .unverifiable, b: .unverifiable))
    #expect(recovery.basis == .factory && recovery.certain && recovery.kept == .a)
    #expect(recovery.state == .factory(version: Self.v1))
  }

  @Test func aVerifiedImageInSlotBOrADamagedCopyIsNoFactoryDevice() {
    let withImage = BootStateRecovery.recover(Self.evidence(pointer: BootPointer(primary: .a)))
    #expect(withImage.basis == .primaryPointer)
    let damaged = BootStateRecovery.recover(
      Self.evidence(pointer: BootPointer(primary: .a), a: .unverifiable, b: .unverifiable, damaged: true))
    #expect(
      damaged.basis == .primaryPointer && damaged.state[.a].version == .zero,
      "a raw image's version is unknown")
  }

  @Test func thePrimarySlotIsKeptWithWhatItsImageSaysAndTheOtherIsEmpty() {
    let recovery = BootStateRecovery.recover(
      Self.evidence(
        .damaged, pointer: BootPointer(primary: .b, trial: .a), b: .verified(Self.report(Self.v2, counter: 7))
      ))
    #expect(recovery.kept == .b && recovery.certain && !recovery.state.provisional)
    #expect(
      recovery.state.confirmed == .b && recovery.state.trial == nil, "a trial whose state was lost ends")
    #expect(
      recovery.state[.b]
        == BootState.Slot(status: .good, version: Self.v2, size: 4096, crc32: 0x1234_5678, securityCounter: 7)
    )
    #expect(recovery.state[.a] == .empty && recovery.state.securityFloor == 7)
  }

  /// A pointer otad never wrote (a boot script's defaults saved, "A B" read as "primary B") at a
  /// slot that holds nothing: found by the real U-Boot, where it made otad keep an empty slot.
  @Test func aBlankPrimarySlotIsNoEvidence() {
    var factory = Self.evidence(
      pointer: BootPointer(primary: .b, trial: .a, booted: .a), a: .unverifiable, b: .unverifiable)
    factory.blank = SlotPair(a: false, b: true)
    let recovery = BootStateRecovery.recover(factory)
    #expect(recovery.basis == .factory && recovery.kept == .a && recovery.certain)

    var used = Self.evidence(.damaged, pointer: BootPointer(primary: .b, booted: .a), b: .unverifiable)
    used.blank = SlotPair(a: false, b: true)
    let rebuilt = BootStateRecovery.recover(used)
    #expect(rebuilt.kept == .a && rebuilt.basis == .bootedSlot && !rebuilt.certain)
    #expect(rebuilt.findings.contains { $0.contains("primary slot B is blank") })

    let state = BootState.factory(version: Self.v1)
    #expect(BootStateRecovery.contradiction(state, BootPointer(primary: .b)) != nil)
    #expect(BootStateRecovery.contradiction(state, BootPointer(primary: .b), isBlank: { $0 == .b }) == nil)
  }

  @Test func aJournalOverThePrimarySlotIsStaleAndIgnored() {
    let recovery = BootStateRecovery.recover(Self.evidence(pointer: BootPointer(primary: .b), journal: .b))
    #expect(recovery.kept == .b && recovery.certain)
    #expect(recovery.findings.contains { $0.contains("the journal is stale") })
  }

  @Test func withoutAPrimaryAJournalKeepsTheOtherSlotProvisionally() {
    let recovery = BootStateRecovery.recover(Self.evidence(.damaged, journal: .a))
    #expect(
      recovery.kept == .b && recovery.basis == .journal && !recovery.certain && recovery.state.provisional)
  }

  /// The unfinished transfer itself: the journal's slot holds an MCUboot image that fails its
  /// check, so it was not confirmed since that transfer began, even if the journal is an old copy.
  @Test func aJournalOverAnUnfinishedImageKeepsTheOtherSlotForCertain() {
    let unfinished = SlotEvidence.invalid(.hashMismatch)
    let recovery = BootStateRecovery.recover(Self.evidence(.damaged, journal: .a, a: unfinished))
    #expect(recovery.kept == .b && recovery.basis == .journalOverUnfinishedImage && recovery.certain)
    #expect(!recovery.state.provisional && recovery.state[.a].status == .empty)
    #expect(recovery.findings.contains { $0.contains("slot A holds an unfinished image") })

    var again = Self.evidence(.missing, journal: .a, a: unfinished, b: .unverifiable)
    again.unconfirmedRebuild = true
    #expect(
      BootStateRecovery.recover(again).certain,
      "an earlier provisional guess may have moved the pointer, which this rule does not read")

    // Not when the other slot cannot hold a good image either, nor when the journal's slot verifies
    // or holds a whole image the policy refuses now (a key no longer trusted: it may have been
    // activated and confirmed since, and the journal be old), nor when its bytes say nothing (raw),
    // nor when the bootloader started the journal's slot.
    for (a, b, pointer) in [
      (
        SlotEvidence.invalid(.signatureInvalid("no trusted key")),
        SlotEvidence.verified(Self.report(Self.v2)),
        BootPointer.unknown
      ),
      (unfinished, SlotEvidence.invalid(.hashMismatch), BootPointer.unknown),
      (.verified(Self.report(Self.v3)), .verified(Self.report(Self.v2)), .unknown),
      (.unverifiable, .verified(Self.report(Self.v2)), .unknown),
      (unfinished, .verified(Self.report(Self.v2)), BootPointer(booted: .a)),
    ] {
      let provisional = BootStateRecovery.recover(
        Self.evidence(.damaged, pointer: pointer, journal: .a, a: a, b: b))
      #expect(
        !provisional.certain && provisional.basis != .journalOverUnfinishedImage, "\(a), \(b), \(pointer)")
    }
  }

  @Test func aStartedSlotThatTheJournalWritesIsKeptProvisionally() {
    let recovery = BootStateRecovery.recover(
      Self.evidence(.damaged, pointer: BootPointer(booted: .a), journal: .a))
    #expect(recovery.kept == .a && recovery.basis == .bootedSlot && !recovery.certain)
  }

  @Test func theStartedSlotAloneIsKeptProvisionally() {
    let recovery = BootStateRecovery.recover(Self.evidence(.damaged, pointer: BootPointer(booted: .b)))
    #expect(recovery.kept == .b && recovery.basis == .bootedSlot && recovery.state.provisional)
  }

  @Test func withNoPointerTheOnlyVerifiedImageElseSlotAIsKeptProvisionally() {
    let only = BootStateRecovery.recover(Self.evidence(.damaged, a: .invalid(.hashMismatch)))
    #expect(only.kept == .b && only.basis == .onlyVerifiedImage && !only.certain)
    let none = BootStateRecovery.recover(Self.evidence(.damaged))
    #expect(none.kept == .a && none.basis == .noEvidence && !none.certain)
  }

  @Test func aContradictedStateKeepsItsFloorAndOutcome() {
    // [SEC-ATK-45]
    var old = BootState.factory(version: Self.v1)
    old.securityFloor = 9
    old.outcome = UpdateOutcome(result: .succeeded, from: .zero, to: Self.v1, reason: .none)
    let why = BootStateRecovery.contradiction(old, BootPointer(primary: .b))
    #expect(why == "the bootloader's primary slot is B, which the boot state calls empty")
    let recovery = BootStateRecovery.recover(
      Self.evidence(.contradicted(old, why: why ?? ""), pointer: BootPointer(primary: .b)))
    #expect(recovery.kept == .b && recovery.state.securityFloor == 9 && recovery.state.outcome == old.outcome)
  }

  @Test func aContradictedStateThatConfirmedTheKeptSlotKeepsItsRecordOfIt() {
    // B confirmed (a raw 2.0.0), A emptied; the copy says so, but the bootloader started A.
    var old = BootState.factory(version: Self.v1)
    old.activate(.b, version: Self.v2, size: 4096, crc32: 7, attempts: 1, permanent: true)
    old.invalidate(.a)
    let why = BootStateRecovery.contradiction(old, BootPointer(primary: .b, booted: .a))
    #expect(why == "the bootloader's started slot is A, which the boot state calls empty")
    let recovery = BootStateRecovery.recover(
      Self.evidence(
        .contradicted(old, why: why ?? ""), pointer: BootPointer(primary: .b, booted: .a), b: .unverifiable))
    #expect(recovery.kept == .b && recovery.state[.b] == old[.b], "the raw image's recorded version is kept")
  }

  @Test func aStateThatAgreesWithItsBootloaderIsNotContradicted() {
    var state = BootState.factory(version: Self.v1)
    state.activate(.b, version: Self.v2, size: 10, crc32: 1, attempts: 2, permanent: false)
    #expect(BootStateRecovery.contradiction(state, BootPointer(primary: .a, trial: .b)) == nil)
    #expect(BootStateRecovery.contradiction(state, .unknown) == nil)
    // PREPARE dropped a trial that never began; the bootloader still arms it until the next apply.
    state.invalidate(.b)
    #expect(BootStateRecovery.contradiction(state, BootPointer(primary: .a, trial: .b)) == nil)
  }

  @Test func aProvisionalStateIsNeverWrittenToDisk() throws {
    var state = BootState.factory(version: Self.v1)
    state.provisional = true
    #expect(try BootState(bytes: state.encoded).provisional == false)
    state.confirmProvisional()
    #expect(!state.provisional)
  }

  // MARK: The slot's own image

  static func mcuboot(_ version: Version) throws -> [UInt8] {
    try MCUbootImageBuilder(version: version, headerSize: 0x20).build(
      payload: Array(repeating: 0x5A, count: 1000))
  }

  static func slot(_ bytes: [UInt8]) -> any SlotReader {
    let medium = MemoryMedium(slotCapacity: 4096)
    medium.fill(.a, with: bytes)
    return (try? medium.openForReading(.a)) ?? { preconditionFailure("memory slot") }()
  }

  @Test func anMCUbootImageIsVerifiedInPlaceAndAnyDamageShows() throws {
    let image = try Self.mcuboot(Self.v3)
    guard
      case .verified(let report) = try ImageVerifier.survey(reader: Self.slot(image), policy: ImagePolicy())
    else {
      Issue.record("not verified")
      return
    }
    #expect(
      report.version == Self.v3 && report.size == UInt64(image.count) && report.crc32 == CRC32.checksum(image)
    )
    var flipped = image
    flipped[600] ^= 1
    #expect(
      try ImageVerifier.survey(reader: Self.slot(flipped), policy: ImagePolicy()) == .invalid(.hashMismatch))
    #expect(try ImageVerifier.survey(reader: Self.slot([1, 2, 3]), policy: ImagePolicy()) == .unverifiable)
    let signed = ImagePolicy(trustedKeys: [ImageSigningKey.generate(.ed25519).publicKey])
    guard
      case .invalid(.signatureInvalid) = try ImageVerifier.survey(reader: Self.slot(image), policy: signed)
    else {
      Issue.record("an unsigned image passed a policy that requires a signature")
      return
    }
  }

  @Test func theInstalledImageCheckFindsRotByRecordAndByHash() throws {
    // [SEC-ATK-46]
    let image = try Self.mcuboot(Self.v2)
    let recorded = BootState.Slot(
      status: .good, version: Self.v2, size: UInt32(image.count), crc32: CRC32.checksum(image))
    #expect(
      try InstalledImageCheck.check(.b, recorded: recorded, reader: Self.slot(image), policy: ImagePolicy())
        == .intact("length and CRC32 as installed, SHA-256"))
    var magic = image
    magic[0] = 0
    #expect(
      try InstalledImageCheck.check(.b, recorded: recorded, reader: Self.slot(magic), policy: ImagePolicy())
        .isRotten)
    // A factory image with nothing recorded: its own hash still finds rot, and raw bytes cannot be judged.
    var payload = image
    payload[700] ^= 0x80
    #expect(
      try InstalledImageCheck.check(
        .a, recorded: BootState.Slot(status: .good), reader: Self.slot(payload), policy: ImagePolicy()
      ).isRotten)
    guard
      case .unchecked = try InstalledImageCheck.check(
        .a, recorded: BootState.Slot(status: .good), reader: Self.slot([9, 9, 9]), policy: ImagePolicy())
    else {
      Issue.record("raw bytes with no record were judged")
      return
    }
  }
}
