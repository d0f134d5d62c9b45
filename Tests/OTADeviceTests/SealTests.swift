import Crypto
import OTABoot
import OTACBOR
import OTAEngine
import OTAReceiverHost
import OTASMPServer
import OTAStorage
import OTATrust
import OTAWire
import Testing

/// The boot stage never runs unsealed bytes: ACTIVATE records the SHA-256 of the bytes it checked
/// (the slot's seal); before a trial boots, and before it is confirmed, the slot is read again
/// and a slot that no longer matches is rolled back with the reason "its slot changed after it
/// was checked". Here the bytes change behind every protocol's back (something on the device
/// wrote the slot file), the one way left once the transaction refuses every late write.
@Suite struct SealTests {
  static let image = DeviceFixture.image(size: 9000, seed: 0x5EA1)
  static let v2 = Version(major: 2, minor: 0, revision: 0)

  /// Slot B holds `image`, validated and activated for a trial through the host's transaction.
  static func armedTrial(_ fixture: DeviceFixture) throws -> ReceiverHost {
    var host = try fixture.makeHost()
    let transfer = try host.begin(.smp, size: UInt32(image.count), crc32: 0, version: v2).get()
    _ = try host.perform(.write(slot: .b, offset: 0, bytes: image[...]), for: transfer.id).get()
    _ = try host.validate(transfer.id).get()
    _ = try host.activate(transfer.id, permanent: false).get()
    return host
  }

  /// Something on the device changes one byte of slot B, durably.
  static func tamper(_ fixture: DeviceFixture, at offset: Int = 4321) {
    var bytes = fixture.medium.durableSlotBytes(.b)
    bytes[offset] ^= 0x01
    fixture.medium.fill(.b, with: bytes)
  }

  @Test func activationRecordsTheSHA256OfTheBytesItChecked() throws {
    // [P-ACT-2] [P-DISK-6] [SEC-CHECK-12]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    let host = try Self.armedTrial(fixture)
    #expect(host.boot.trial?.slot == .b)
    #expect(host.boot[.b].seal == Array(SHA256.hash(data: Self.image)))
    // Untouched, it boots on trial and is confirmed.
    let next = try fixture.boot(verdict: .passes)
    #expect(next.running == .b && next.boot.confirmed == .b && next.boot[.b].seal != nil)
  }

  @Test func aTrialWhoseSlotChangedAfterActivationNeverBoots() throws {
    // [P-ACT-2] [P-INFO-20] [SEC-CHECK-13] [SEC-ATK-30]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    _ = try Self.armedTrial(fixture)
    Self.tamper(fixture)
    let decision = try fixture.control.runBootStage()
    #expect(decision.run == .a && decision.state.confirmed == .a)
    #expect(decision.brokenSeal?.contains("no longer those checked at activation") == true)
    #expect(decision.state.outcome.result == .rolledBack && decision.state.outcome.reason == .sealBroken)
    #expect(decision.state[.b].status == .bad)
    #expect(fixture.bootloader.appliedPlans.last?.trial == nil, "the bootloader is told no trial")
    #expect(try fixture.boot(verdict: .silent).running == .a)
  }

  @Test func aTrialWhoseSlotChangesWhileItRunsIsNotConfirmed() throws {
    // [P-ACT-2] [SEC-CHECK-13] [SEC-ATK-30]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    _ = try Self.armedTrial(fixture)
    var host = try fixture.boot(verdict: .silent)
    #expect(host.running == .b && host.runningOnTrial)
    Self.tamper(fixture)
    // The health check passed, or a central confirms: the slot is read again first.
    let why = try host.markGood()
    #expect(why?.contains("slot B") == true)
    #expect(host.runningMarkedBad && host.boot.confirmed == .a)
    #expect(host.boot.outcome.reason == .sealBroken)
    #expect(try fixture.boot(verdict: .silent).running == .a)
  }

  @Test func aCentralsConfirmOfATamperedTrialIsAnsweredValidationFailed() throws {
    // [P-REQ-14] [SEC-CHECK-13] [SEC-ATK-30]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    _ = try Self.armedTrial(fixture)
    var host = try fixture.boot(verdict: .silent)
    Self.tamper(fixture)
    _ = try host.handle(.connected(mtu: ATTMTU(247)))
    let answers = try host.handle(.control([Opcode.confirm.rawValue], now: .seconds(1)))
    #expect(
      answers == [
        .notify(Response(requestOpcode: Opcode.confirm.rawValue, status: .validationFailed).encoded)
      ])
    #expect(host.runningMarkedBad)
  }

  @Test func anSMPConfirmOfATamperedTrialMarksItBadInstead() throws {
    // [SEC-CHECK-13] [SEC-ATK-30]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    _ = try Self.armedTrial(fixture)
    var host = try fixture.boot(verdict: .silent)
    Self.tamper(fixture)
    var device = SMPDevice()
    var client = SMPDeviceTests.Client()
    let answer = try client.body(
      try device.handle(
        client.message(.write, group: 1, command: 0, .textMap(["confirm": .bool(true)])), host: &host))
    // The image group's "image confirmation denied" (rc 32): the trial was marked bad, not confirmed.
    #expect(answer == .textMap(["err": .textMap(["group": .unsigned(1), "rc": .unsigned(32)])]), "\(answer)")
    #expect(host.runningMarkedBad && host.boot.confirmed == .a && host.boot.outcome.reason == .sealBroken)
  }

  @Test func otadMarkGoodOfATamperedTrialMarksItBadInstead() throws {
    // [SEC-CHECK-13] [SEC-ATK-30]
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    _ = try Self.armedTrial(fixture)
    _ = try fixture.boot(verdict: .silent)
    Self.tamper(fixture, at: 0)
    guard case .sealBroken(let why, let after) = try fixture.control.markGood() else {
      Issue.record("mark-good confirmed a tampered trial")
      return
    }
    #expect(why.contains("slot B") && after.confirmed == .a && after[.b].status == .bad)
  }

  @Test func aTrialArmedBeforeSealsExistedStillBoots() throws {
    let fixture = DeviceFixture(slotCapacity: 64 * 1024)
    var host = try Self.armedTrial(fixture)
    try host.changeBoot { $0.slots.b.seal = nil }
    #expect(fixture.control.checkSeal(.b, in: host.boot) == .unsealed)
    #expect(try fixture.boot(verdict: .silent).running == .b)
  }
}
