import OTABoot
import OTAChecksum
import OTAJournal
import OTALink
import OTASender
import OTASimulation
import OTASocketLink
import OTAStorage
import OTATrust
import OTAWire
import Testing

/// The boot state and the journal destroyed in every way a file can be (missing, empty, truncated,
/// zeroed, bit-flipped, an old valid copy), both boot-state copies and the journal independently,
/// at each point of a device's life. Whatever is left, the device never boots a bad or unverified
/// image and never writes over the last good one.
@Suite struct BootStateDamageTests {
  enum Damage: String, CaseIterable {
    case intact, missing, empty, truncated, zeroed, bitFlipped, oldCopy

    /// The record's bytes after the damage; nil: no record. `old` is an older valid record.
    func apply(to bytes: [UInt8]?, old: [UInt8]?) -> [UInt8]? {
      switch self {
      case .intact: return bytes
      case .missing: return nil
      case .empty: return []
      case .truncated: return bytes.map { Array($0.prefix($0.count / 2)) } ?? [0x4F]
      case .zeroed: return [UInt8](repeating: 0, count: bytes?.count ?? BootState.byteCount)
      case .bitFlipped:
        guard var flipped = bytes, !flipped.isEmpty else { return [0x01] }
        flipped[flipped.count / 3] ^= 0x10
        return flipped
      case .oldCopy: return old
      }
    }

    /// A copy that fails its checks (and is moved aside).
    var destroysContent: Bool { [.empty, .truncated, .zeroed, .bitFlipped].contains(self) }
  }

  /// A device at one point of its life, captured, with the truth about it.
  struct Scene {
    var name: String
    var slotA: [UInt8]
    var slotB: [UInt8]
    var records: [String: [UInt8]]
    var plan: BootPlan
    /// The slot holding the last confirmed image, and that image.
    var lastGood: SlotID
    var lastGoodImage: [UInt8]
    /// Slots that may run: the last good one, and a trial's slot while its trial is under way.
    var mayRun: Set<SlotID>
    /// Earlier valid records, for the "old copy" damage.
    var oldBootState: [UInt8]
    var oldJournal: [UInt8]
  }

  static let capacity = 16 * 1024
  static let v1 = Version(major: 1, minor: 0, revision: 0)
  static let v2 = Version(major: 2, minor: 0, revision: 0)
  static let v3 = Version(major: 3, minor: 0, revision: 0)
  static let v4 = Version(major: 4, minor: 0, revision: 0)

  static func image(_ version: Version, size: Int, seed: UInt64) throws -> [UInt8] {
    try MCUbootImageBuilder(version: version, headerSize: 0x20).build(
      payload: DeviceFixture.image(size: size, seed: seed))
  }

  static let images: (v1: [UInt8], v2: [UInt8], v3: [UInt8], v4: [UInt8]) = {
    do {
      return (
        try image(v1, size: 3000, seed: 1), try image(v2, size: 5000, seed: 2),
        try image(v3, size: 4000, seed: 3),
        try image(v4, size: 4500, seed: 4)
      )
    } catch {
      preconditionFailure("sample images: \(error)")
    }
  }()

  /// The journal as the previous otad kept it (one 32-byte record replaced whole): a device upgraded
  /// with a damaged journal must fare as well as one that never was. (The in-place journal keeps two
  /// copies; its damage is `AlternatingRecordTests`' and the power-cut loop's.)
  static let names = [BootState.recordName, BootStateStore.copyName, TransferJournalStore.legacyFileName]

  /// The device's life: factory v1 on A; v2 confirmed on B; v3 rolled back on A; v3 being
  /// received into A; v3 validated in A; v3 on trial in A.
  static func scenes() throws -> [Scene] {
    let link = LinkConditions(mtu: 247)
    var scenes: [Scene] = []
    func capture(
      _ fixture: DeviceFixture, _ name: String, lastGood: SlotID, image: [UInt8], mayRun: Set<SlotID>
    )
      throws
    {
      var records: [String: [UInt8]] = [:]
      for record in names where record != TransferJournalStore.legacyFileName {
        records[record] = try fixture.medium.load(record)
      }
      records[TransferJournalStore.legacyFileName] = try TransferJournalStore.peek(fixture.medium).value?
        .encoded
      let previous = scenes.last
      scenes.append(
        Scene(
          name: name, slotA: fixture.medium.slotBytes(.a), slotB: fixture.medium.slotBytes(.b),
          records: records,
          plan: fixture.bootloader.appliedPlans.last ?? BootPlan(primary: .a), lastGood: lastGood,
          lastGoodImage: image, mayRun: mayRun,
          oldBootState: previous?.records[BootState.recordName] ?? [],
          oldJournal: TransferJournal(
            slot: .b, state: .validated, size: UInt32(images.v2.count), crc32: CRC32.checksum(images.v2),
            version: v2, committedOffset: UInt32(images.v2.count)
          ).encoded))
    }

    let fixture = DeviceFixture(slotCapacity: capacity, runningImage: images.v1)
    _ = try fixture.boot()
    try capture(fixture, "factory", lastGood: .a, image: images.v1, mayRun: [.a])
    _ = try fixture.push(images.v2, version: v2, conditions: link, seed: 1)
    try capture(fixture, "v2 confirmed on B", lastGood: .b, image: images.v2, mayRun: [.b])
    _ = try fixture.push(
      images.v3, version: v3, conditions: link, seed: 2, verdict: .fails, expectSuccess: false)
    try capture(fixture, "v3 rolled back on A", lastGood: .b, image: images.v2, mayRun: [.b])
    _ = try fixture.push(
      images.v3, version: v3, conditions: link, seed: 3,
      sender: SenderConfiguration(version: v3, activate: false))
    try capture(fixture, "v3 validated in A", lastGood: .b, image: images.v2, mayRun: [.b])
    // The same, but the transfer under way: half of A written, the journal at half.
    var receiving = scenes[scenes.count - 1]
    receiving.name = "v3 half received in A"
    let half = UInt32(images.v3.count / 2)
    receiving.records[TransferJournalStore.legacyFileName] =
      TransferJournal(
        slot: .a, state: .receiving, size: UInt32(images.v3.count), crc32: CRC32.checksum(images.v3),
        version: v3,
        committedOffset: half
      ).encoded
    for index in Int(half)..<receiving.slotA.count { receiving.slotA[index] = 0 }
    scenes.append(receiving)
    _ = try fixture.push(
      images.v3, version: v3, conditions: link, seed: 4, verdict: .silent, expectSuccess: false)
    try capture(fixture, "v3 on trial in A", lastGood: .b, image: images.v2, mayRun: [.a, .b])
    return scenes
  }

  /// A fresh device holding `scene` with each record damaged as told.
  static func device(_ scene: Scene, _ damages: [Damage], primaryPointer: Bool) throws -> DeviceFixture {
    let fixture = DeviceFixture(
      slotCapacity: capacity, runningImage: scene.slotA, bootloaderReportsPrimary: primaryPointer)
    fixture.medium.fill(.b, with: scene.slotB)
    try fixture.bootloader.apply(scene.plan)
    for (name, damage) in zip(names, damages) {
      let old = name == TransferJournalStore.legacyFileName ? scene.oldJournal : scene.oldBootState
      if let bytes = damage.apply(to: scene.records[name], old: old.isEmpty ? nil : old) {
        try fixture.medium.replace(name, with: bytes)
      }
    }
    return fixture
  }

  /// With a bootloader that tells its primary slot (every backend now), and with one that tells
  /// only the slot it starts (a file-backend install older than its primary link).
  @Test(arguments: [true, false])
  func noDamageToTheBootStateOrJournalLosesTheGoodImage(primaryPointer: Bool) throws {
    // [SEC-ATK-44] [SEC-ATK-45]
    var runs = 0
    var rebuilt = 0
    var provisional = 0
    var pushed = 0
    for scene in try Self.scenes() {
      for primary in Damage.allCases {
        for copy in Damage.allCases {
          for journal in Damage.allCases {
            let damages = [primary, copy, journal]
            let label =
              "\(scene.name), primary pointer \(primaryPointer): boot.state \(primary), copy \(copy), journal \(journal)"
            let fixture = try Self.device(scene, damages, primaryPointer: primaryPointer)
            runs += 1

            let decision = try fixture.control.runBootStage()
            if decision.reading?.recovery != nil { rebuilt += 1 }
            if decision.state.provisional { provisional += 1 }
            #expect(scene.mayRun.contains(decision.run), "\(label): runs slot \(decision.run)")
            let runningBytes = fixture.medium.slotBytes(decision.run)
            #expect(
              runningBytes.starts(with: scene.lastGoodImage)
                || (decision.run == .a && scene.mayRun.contains(.a)
                  && runningBytes.starts(with: Self.images.v3)),
              "\(label): slot \(decision.run) does not hold a good image")
            if primary.destroysContent {
              #expect(
                decision.reading?.movedAside.contains(BootState.recordName) == true, "\(label): not reported")
            }

            // Then an update arrives: it never lands on the last good image.
            let run = try fixture.push(
              Self.images.v4, version: Self.v4, conditions: LinkConditions(mtu: 247), seed: UInt64(runs),
              sender: SenderConfiguration(version: Self.v4, activate: false), limit: .seconds(600),
              verdict: .silent, expectSuccess: false)
            if case .succeeded = run.result.outcome { pushed += 1 }
            #expect(
              fixture.medium.slotBytes(scene.lastGood).starts(with: scene.lastGoodImage),
              "\(label): the last good image in slot \(scene.lastGood) was written over")
          }
        }
      }
    }
    print(
      "DAMAGE primary-pointer=\(primaryPointer) runs=\(runs) rebuilt=\(rebuilt) provisional=\(provisional) pushes-accepted=\(pushed)"
    )
    #expect(runs == 6 * 343)
  }
}
